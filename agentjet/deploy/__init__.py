"""Deployment: the swarm server as a container image built without a registry, and a compose example.

compose.py  The compose example written out: a server and N sandboxed clients on one machine (`files/compose.yaml`).
image.py    The swarm server's container image, built without a registry: a Python 3.11 base plus agentjet and its
            dependencies.
files/      Package data: the Dockerfile, compose.yaml (+ compose.gpu.yaml for GPU hosts) and the example's train.yaml.
"""
