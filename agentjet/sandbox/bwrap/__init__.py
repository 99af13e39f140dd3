"""The bubblewrap backend: a sandboxed process tree under its own cgroup, launched, watched and torn down.

backend.py  The bubblewrap backend: untrusted code in fresh namespaces as uid 65534, limited by its own cgroup.
cgroups.py  Per-run cgroups for the bwrap backend: whole-tree memory, pids and CPU limits, usage, kill, removal.
launch.py   The command line that starts one bwrap sandbox, and the private mount base it needs.
watch.py    Watch one sandboxed process from the host: read its output incrementally, enforce wall time and output
            size.
"""
