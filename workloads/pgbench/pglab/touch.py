"""Fault a backend's whole shared memory mapping from outside it.

process_vm_readv(2) reads the target's memory through get_user_pages on
the target's mm: a page not yet mapped there is faulted in that mm (its
page tables allocated, a hugetlb PMD table shared by huge_pmd_share() as
on the backend's own fault).  One byte per `stride` suffices for the page
tables: one read per 2 MiB allocates a PTE page (4 KiB pages) or fills a
PMD entry (2 MiB pages), one per 1 GiB a PUD entry (1 GiB pages).  Why the
lab does this instead of waiting for pgbench to touch the buffer pool:
workloads/pgbench/README.md ("Warm backends").
"""
import ctypes
import os

IOV_MAX = 1024


class _Iovec(ctypes.Structure):
    _fields_ = [("iov_base", ctypes.c_void_p), ("iov_len", ctypes.c_size_t)]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.process_vm_readv.restype = ctypes.c_ssize_t
_libc.process_vm_readv.argtypes = [
    ctypes.c_int, ctypes.POINTER(_Iovec), ctypes.c_ulong,
    ctypes.POINTER(_Iovec), ctypes.c_ulong, ctypes.c_ulong]


def addresses(start, size, stride):
    """One address per stride-aligned range of [start, start + size)."""
    first = start - start % stride
    return [max(a, start) for a in range(first, start + size, stride)]


def touch(pid, start, size, stride):
    """Read one byte at every address of addresses(); returns the number
    of bytes read (len(addresses) when every read worked).  Raises
    OSError when the process cannot be read at all (gone, no permission).
    """
    addrs = addresses(start, size, stride)
    done = 0
    buf = ctypes.create_string_buffer(IOV_MAX)
    for i in range(0, len(addrs), IOV_MAX):
        chunk = addrs[i:i + IOV_MAX]
        local = _Iovec(ctypes.cast(buf, ctypes.c_void_p), len(chunk))
        remote = (_Iovec * len(chunk))(*[_Iovec(a, 1) for a in chunk])
        n = _libc.process_vm_readv(pid, ctypes.byref(local), 1, remote,
                                   len(chunk), 0)
        if n < 0:
            err = ctypes.get_errno()
            raise OSError(err, "process_vm_readv(%d): %s"
                          % (pid, os.strerror(err)))
        done += n
        if n < len(chunk):
            break
    return done
