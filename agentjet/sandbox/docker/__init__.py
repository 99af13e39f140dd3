"""The Docker backend: the private engine connection, the sandbox image (built by debootstrap), containers and
their accounting.

accounting.py  Peak memory, CPU time and the pids verdict of a container, readable after it exited.
backend.py     The Docker backend: each run is a fresh container with no network, a read-only root and hard limits.
engine.py      Find and connect to the Docker engine the sandboxes use, or say how to start one.
image.py       The sandbox image: a Debian rootfs with Python and the client deps, tagged by the hash of its inputs.
rootfs.py      The steps that make a sandbox rootfs in a directory: debootstrap, pip wheels, mount points, cleanup.

image_definition/  The image's inputs (packages.txt, requirements.txt), shipped as package data; their hash is the tag.
"""
