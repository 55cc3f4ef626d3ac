"""Provenance: what produced the figures of a run.

Source package and version, each kernel build's series and config hashes
and package sha256, and per guest the kernel it verified, its command line,
its shape and the parameters of every workload it ran."""

import os


def kernels_of(manifest):
    """Kernel build manifests (hugelab.kernel/1), or the smoke harness's
    record of a distribution kernel ({"package", "version", "deb",
    "package_sha256"}), in one shape."""
    out = {}
    for key, k in sorted((manifest.get("kernels") or {}).items()):
        if not isinstance(k, dict):
            continue
        debs = [{"name": d.get("name"), "sha256": d.get("sha256")}
                for d in k.get("debs") or [] if isinstance(d, dict)]
        if not debs and k.get("package_sha256"):
            debs = [{"name": os.path.basename(k.get("deb") or "") or
                     k.get("package"), "sha256": k["package_sha256"]}]
        source = k.get("source")
        if not source and k.get("package"):
            source = {"package": k.get("package"),
                      "version": k.get("version")}
        out[key] = {
            "variant": k.get("variant"), "flavour": k.get("flavour"),
            "source": source,
            "series_sha256": k.get("series_sha256"),
            "config_sha256": k.get("config_sha256"),
            "kernelrelease": k.get("kernelrelease"),
            "debs": debs,
            "build_seconds": k.get("build_seconds"),
        }
    return out


def guest_of(g):
    k = g.kernel
    params = []
    for r in g.results:
        params.append({"experiment": r.name, "program": r.program,
                       "config": r.config,
                       "cmdline": r.kernel.get("cmdline"),
                       "release": r.kernel.get("release"),
                       "hugetlb_fault_lock":
                           r.kernel.get("hugetlb_fault_lock")})
    kernel = {"variant": k.get("variant"), "flavour": k.get("flavour"),
              "release": k.get("release"),
              "package_sha256": k.get("package_sha256"),
              "cmdline": k.get("cmdline"),
              "verified": k.get("verified")}
    # The kernel line ("6.1", "6.12"), in guest.json since there are two.
    if k.get("source"):
        kernel["source"] = k["source"]
    return {
        "hypervisor": g.doc.get("hypervisor"),
        "shape": g.shape,
        "kernel": kernel,
        "workloads": params,
    }


def analyse(run):
    m = run.manifest
    out = {
        "run_id": run.run_id,
        "harness": m.get("harness"),
        "started_at": m.get("started_at"),
        "finished_at": m.get("finished_at"),
        "source": m.get("source"),
        "kernels": kernels_of(m),
        "guests": {g.name: guest_of(g) for g in run.guests},
        "timings": m.get("timings"),
    }
    # Every kernel line's source package (run manifests since 6.12).
    if m.get("sources"):
        out["sources"] = m["sources"]
    return out
