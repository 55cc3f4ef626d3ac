"""hugelab-report: render and compare hugelab run directories.

Inputs are only the JSON documents described in workloads/SCHEMA.md and
reports/RUNDIR.md.  See reports/README.md for the command line.
"""

VERSION = "1"
