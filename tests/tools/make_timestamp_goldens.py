"""Write tests/goldens/timestamps.json: ``new Date(value).getTime()`` as
node computes it (null for NaN) for unusual and random timestamp values, in
several time zones (local date-times depend on them).
Run by hand (needs node): python tests/tools/make_timestamp_goldens.py"""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "goldens" / "timestamps.json"

SPECIAL = [
    None, True, False, 0, 1.7, -1.7, 8.64e15, 8.64e15 + 2, -8.64e15, [1704067215000], {"a": 1},
    "2024", "2024-01", "2024-01-01", "2024-01-01T00:00:15", "2024-01-01t00:00:15z",
    "Mon, 01 Jan 2024 00:00:15 GMT", "Tue, 1 Jan 2024 10:00:00 +0200", "+002024-01-01T00:00:15.000Z",
    "2024-02-30T00:00:00.000Z", "2024-04-31T00:00:00.000Z", "2024-01-01T24:00:00.000Z",
    "2024-01-01T24:00:01Z", "275760-09-13T00:00:00.001Z", "+275760-09-13T00:00:00.000Z",
    "+275760-09-13T00:00:00.001Z", "2024-01-01T00:00Z", "2024-13-01T00:00:00Z", "2024-00-10",
    "2024-01-32", "1704067215000", "2024-01-01T00:00:15.1234567Z", "2024-01-01T00:00:15+0100",
    "2024-01-01T00:00:15.000+05:30", " 2024-01-01T00:00:15Z", "2024-01-01T00:60:00Z",
    "-000001-01-01T00:00:00Z", "-000000-01-01T00:00:00Z", "", "not a date",
    "2025-12-02Z", "2025-12-02+05:30", "2025-12-02T10:00:00+23:59", "2025-12-02T10:00:00+24:00",
    "2025-12-02T10:00:00+05:60", "2025-12-02 10:00:00Z", "2025-12-02 10:00:00", "2025-12-02 10:00",
    "2025-12-02 10:00:00.123Z", "2025-12-02 10:00:00+01:00", "Mon, 01 Jan 2024 00:00:15",
    # around daylight-saving changes (New York, Berlin, Lord Howe's half hour)
    "2025-03-09T01:59:59", "2025-03-09T03:00:00", "2025-03-09T05:00:00", "2025-11-02T00:30:00",
    "2025-11-02T02:30:00", "2025-03-30T01:30:00", "2025-03-30T03:30:00", "2025-10-26T03:30:00",
    "2025-04-06T01:45:00", "2025-04-06T02:15:00", "2025-10-05T02:45:00", "2025-07-01T12:00:00",
    "2025-03-09T02:30:00", "2025-03-09T02:00:00", "2025-11-02T01:30:00", "2025-10-05T02:15:00",
    "2025-03-30T02:30:00", "2025-10-26T02:30:00", "Sun, 09 Mar 2025 02:30:00", "Sun, 02 Nov 2025 01:30:00",
]
ZONES = ["UTC", "America/New_York", "Asia/Kolkata", "Europe/Berlin", "Australia/Lord_Howe"]


def random_values(n: int = 600, seed: int = 11) -> list[str]:
    r = random.Random(seed)
    out = []
    for _ in range(n):
        y = r.choice([r.randint(-300000, 300000), r.randint(1900, 2100), r.randint(-5, 5)])
        year = f"{y:04d}" if 0 <= y <= 9999 else ("+" if y >= 0 else "-") + f"{abs(y):06d}"
        text = f"{year}-{r.randint(0, 13):02d}-{r.randint(1, 32):02d}"
        text += f"T{r.randint(0, 25):02d}:{r.randint(0, 60):02d}"
        if r.random() < 0.8:
            text += f":{r.randint(0, 60):02d}"
            if r.random() < 0.5:
                text += f".{r.randint(0, 999999)}"
        out.append(text + r.choice(["Z", "z", "+01:00", "-0530", "Z"]))
    return out


def main() -> None:
    values = SPECIAL + random_values()
    script = (
        "const v = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "console.log(JSON.stringify(v.map(x => { const t = new Date(x).getTime(); return Number.isNaN(t) ? null : t; })));"
    )
    table = {}
    for zone in ZONES:
        env = {**os.environ, "TZ": zone}
        run = subprocess.run(["node", "-e", script], input=json.dumps(values), capture_output=True, text=True, check=True, env=env)
        table[zone] = [[v, t] for v, t in zip(values, json.loads(run.stdout))]
    OUT.write_text(json.dumps(table, indent=0) + "\n")
    print(f"wrote {OUT} ({len(values)} values x {len(ZONES)} zones)")


if __name__ == "__main__":
    main()
