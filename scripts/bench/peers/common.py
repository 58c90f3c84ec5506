"""Shared helpers of the benchmark's peer runners (scripts/bench/peers):
process-tree RSS sampling, CPU seconds of a process tree from /proc, and
result files (one JSON object per run). The lakemirror runner is in Go
(benchctl lakemirror) and measures the same way."""
import json
import os
import threading
import time


def proc_tree(pid):
    """pid and all its descendants (from /proc/*/stat ppid links)."""
    children = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                s = f.read()
            ppid = int(s[s.rfind(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


CLK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid=None):
    """CPU seconds (user + system) used so far by a process tree: each live
    process's own time plus the time of its children it has reaped."""
    total = 0
    for p in proc_tree(pid or os.getpid()):
        try:
            with open(f"/proc/{p}/stat") as f:
                s = f.read()
            fields = s[s.rfind(")") + 2:].split()
            total += sum(int(x) for x in fields[11:15])
        except (OSError, ValueError, IndexError):
            pass
    return total / CLK


class RSSSampler:
    """Samples the summed RSS of a process tree every `every` seconds in a
    thread; peak() is the highest sum seen since the last reset()."""

    def __init__(self, pid=None, every=0.25):
        self.pid = pid or os.getpid()
        self.every = every
        self._peak = 0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self):
        while not self._stop.is_set():
            try:
                total = sum(rss_kib(p) for p in proc_tree(self.pid))
                self._peak = max(self._peak, total)
            except Exception:
                pass
            self._stop.wait(self.every)

    def now_mib(self):
        return round(sum(rss_kib(p) for p in proc_tree(self.pid)) / 1024, 1)

    def peak_mib(self):
        """the peak since reset(), including a sample taken now"""
        try:
            self._peak = max(self._peak, sum(rss_kib(p) for p in proc_tree(self.pid)))
        except Exception:
            pass
        return round(self._peak / 1024, 1)

    def reset(self):
        self._peak = 0

    def stop(self):
        self._stop.set()
        self._t.join()


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def write_result(path, res):
    res.setdefault("loadavg_end", loadavg())
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(res, f, indent=1, default=str)
    print("RESULT " + json.dumps(res, default=str), flush=True)


def batch_files(data_dir, batch):
    d = os.path.join(data_dir, f"changes-b{batch}")
    if not os.path.isdir(d):
        raise SystemExit(f"{d} missing: run benchctl gen with --batch {batch}")
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".parquet"))
