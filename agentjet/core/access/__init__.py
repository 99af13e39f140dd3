"""Who may do what: signed episode keys, the admin token, revocable client tokens, and the 0600 files that hold
them.

keys.py           Episode keys and server tokens: HMAC-signed, constant-time checked, persisted with mode 600.
private_files.py  Files only their owner may read (mode 600): admin tokens, server tokens handed to a child, the key
                  secret.
tokens.py         Client tokens: issued and revoked by the admin, stored hashed in `<state-dir>/tokens.json`.
"""
