"""Episodes as records: the open episode in memory, closing it into the durable journal (with its salvage), and
timeline merging into samples.

closed_episodes.py  Closing an open episode into the journal, and what the engine remembers of the episodes it
                    closed.
journal.py          The durable journal of closed episodes: SQLite in WAL mode with synchronous=FULL.
journal_pages.py    Read rows straight off an SQLite file's b-tree leaf pages: the journal's salvage when SQLite
                    itself cannot.
journal_repair.py   `agentjet server repair STATE_DIR`: salvage every intact record of a damaged journal.
merging.py          Timeline merging: fold an episode's calls into training samples (pure; no I/O, no clock).
open_episode.py     An episode between begin and end, as the engine holds it in memory (mutated only by the engine).
"""
