"""write-manifest refuses values that are not what they claim to be."""
import json
import os
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
WRITER = os.path.join(HERE, "..", "write-manifest")
SHA = "ab" * 32


def good_env():
    return {
        "LINE": "6.1", "VARIANT": "patched", "FLAVOUR": "perf",
        "SRC_PKG": "linux-source-6.1", "SRCVER": "6.1.192-3",
        "SERIES_FILES": "/x/0001-a.patch /x/0002-b.patch",
        "SERIES_SHA": SHA, "FRAG_SHA": SHA, "CONFIG_SHA": SHA,
        "INPUTS": SHA, "KREL": "6.1.192-hugelab-patched-perf",
        "LOCALVERSION": "-hugelab-patched-perf",
        "PKGVERSION": "6.1.192-3+hl.abababababab", "secs": "720",
        "cpu": "1300",
    }


class WriteManifest(unittest.TestCase):
    def run_writer(self, **override):
        out = tempfile.mkdtemp()
        self.addCleanup(subprocess.run, ["rm", "-rf", out])
        os.mkdir(os.path.join(out, "debs"))
        deb = "linux-image-6.1.192-hugelab-patched-perf_x_amd64.deb"
        with open(os.path.join(out, "debs", deb), "wb") as f:
            f.write(b"deb")
        env = dict(os.environ, **good_env())
        env.update(override)
        manifest = os.path.join(out, "manifest.json")
        r = subprocess.run([WRITER, manifest, out], env=env,
                           capture_output=True, text=True)
        return r, manifest

    def test_good_values_are_written(self):
        r, manifest = self.run_writer()
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(manifest) as f:
            m = json.load(f)
        self.assertEqual(m["kernelrelease"], "6.1.192-hugelab-patched-perf")
        self.assertEqual(m["series"], ["0001-a.patch", "0002-b.patch"])
        self.assertEqual(m["build_seconds"], 720)
        self.assertEqual(m["source"], {"package": "linux-source-6.1",
                                       "version": "6.1.192-3",
                                       "line": "6.1"})

    def test_the_6_12_line(self):
        r, manifest = self.run_writer(
            LINE="6.12", SRC_PKG="linux-source-6.12",
            SRCVER="6.12.118-1~deb12u1",
            PKGVERSION="6.12.118-1~deb12u1+hl.abababababab",
            KREL="6.12.118-hugelab-patched-perf")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(manifest) as f:
            self.assertEqual(json.load(f)["source"]["line"], "6.12")

    def test_source_version_must_be_of_the_line(self):
        # A 6.1 version recorded as the 6.12 line (or the reverse).
        for over in ({"LINE": "6.12", "SRC_PKG": "linux-source-6.12"},
                     {"SRC_PKG": "linux-source-6.12"}):
            with self.subTest(**over):
                r, _ = self.run_writer(**over)
                self.assertEqual(r.returncode, 1)

    def test_bad_values_are_refused(self):
        bad = {
            "KREL": "make[2]: Entering directory '/k/src'\n"
                    "6.1.192-hugelab-patched-perf",
            "SRCVER": "\x1b[1m6.1.192-3\x1b[0m",
            "PKGVERSION": "6.1.192-3",
            "INPUTS": "not-a-sha",
            "secs": "12 s",
        }
        for key, value in bad.items():
            with self.subTest(key=key):
                r, manifest = self.run_writer(**{key: value})
                self.assertEqual(r.returncode, 1)
                self.assertIn("refusing to write the manifest", r.stderr)
                self.assertFalse(os.path.exists(manifest))

    def test_release_must_carry_the_localversion(self):
        r, _ = self.run_writer(KREL="6.1.192-hugelab-stock-perf")
        self.assertEqual(r.returncode, 1)


if __name__ == "__main__":
    unittest.main()
