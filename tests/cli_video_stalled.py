#!/usr/bin/env python3
"""tvlm video on a stream whose server accepts and never answers: it must give up after
--timeout with one error line naming the source, not hang. Usage: cli_video_stalled.py TVLM"""

import socket
import subprocess
import sys
import time

tvlm = sys.argv[1]
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(8)  # connections complete from the backlog; nothing is ever sent
url = f"http://127.0.0.1:{server.getsockname()[1]}/clip.mp4"
start = time.monotonic()
run = subprocess.run(
    [tvlm, "video", url, "--decoder", "cpu", "--timeout", "1", "--out", "stalled.npy"],
    capture_output=True,
    text=True,
    timeout=60,
)
waited = time.monotonic() - start
last = run.stderr.strip().splitlines()[-1] if run.stderr.strip() else ""
want = f"tvlm video: error: video '{url}': nothing arrived for 1 s: the source stalled"
ok = run.returncode == 1 and last.startswith(want) and 1.0 <= waited < 30
print(f"exit {run.returncode} after {waited:.1f} s: {last}")
sys.exit(0 if ok else 1)
