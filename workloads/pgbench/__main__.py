"""Entry point of the pgbench experiment's zip (make -C workloads)."""
import sys

from pglab.cli import main

sys.exit(main())
