"""hugelab's PostgreSQL experiment (workloads/pgbench/README.md).

Built into one executable zip, workloads/build/pgbench (make -C workloads),
run in a guest as `pgbench --json OUT ...`; `pgbench --check --guest-shape
...` answers on the controller without PostgreSQL.
"""
