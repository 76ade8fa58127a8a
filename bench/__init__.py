"""`make bench` (bench.py), the tools it serves (bench_tools) and the hand-written peer it races (peer.py)."""
