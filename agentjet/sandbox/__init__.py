"""Run generated and untrusted code where it cannot harm the host, leak the token or reach a network.

Two backends share one contract: a real Docker engine (`--network none`, locally built image) and
bubblewrap (`setpriv` + `bwrap --unshare-all`) where no engine runs. Swarm access goes through a
Unix socket mounted into the sandbox, never through a network.
"""
