"""The plots of benches/RESULTS.md, drawn from the figures in benches/results/*.json.

Each JSON file holds one benchmark's figures as the benchmark gives them, with the command that made them, the
date and the machine. `benches/reader.py --json`, `benches/floor.py --json` and `benches/remote.py --json` write
theirs; `service_load.json` holds recorded runs' figures, written by hand from the benchmarks' tables.

Usage: .venv/bin/python benches/plot.py    (matplotlib; writes benches/plots/*.png)

A plot whose JSON file is missing is skipped with a line on stderr.
"""

from __future__ import annotations

import json
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent
RESULTS = ROOT / "results"
PLOTS = ROOT / "plots"

FRAMEFEED = "#1f6fb4"
PEERS = ["#9a9a9a", "#c9a227", "#7aa874", "#b56a5c"]
FLOOR = "#444444"
SIZE = (10, 5)
DPI = 100


def load(name: str) -> dict | None:
    path = RESULTS / f"{name}.json"
    if not path.exists():
        print(f"plot.py: {path} is missing, its plot is skipped", file=sys.stderr)
        return None
    return json.loads(path.read_text())


def footer(fig: plt.Figure, data: dict) -> None:
    """The machine, the date and the command, small, under the plot."""
    text = f"{data['machine']}, {data['date']}"
    if "command" in data:
        text += f"\n{data['command']}"
    fig.text(0.01, 0.01, text, fontsize=7, color="#555555", ha="left", va="bottom")


def save(fig: plt.Figure, name: str) -> None:
    PLOTS.mkdir(exist_ok=True)
    path = PLOTS / f"{name}.png"
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    print(f"wrote {path.relative_to(ROOT.parent)} ({path.stat().st_size // 1024} KiB)")


def random_access() -> None:
    data = load("random_access")
    if data is None:
        return
    readers = [("framefeed", "framefeed"), ("video_reader_rs", "video-reader-rs"), ("decord2", "decord2"),
               ("decord", "decord 0.6"), ("torchcodec", "TorchCodec")]
    videos = [("1080p_60s", "60 s 1080p"), ("1080p_10min", "10 min 1080p")]
    rows = {(r["video"], r["reader"]): r for r in data["rows"]}
    fig, axes = plt.subplots(1, 2, figsize=SIZE)
    width = 0.16
    for ax, key, ylabel, fmt in ((axes[0], "median_s", "seconds (lower is better)", "{:.2f}"),
                                 (axes[1], "peak_mib", "peak resident memory, MiB (lower is better)", "{:.0f}")):
        for i, (reader, label) in enumerate(readers):
            xs, ys = [], []
            for j, (video, _) in enumerate(videos):
                row = rows.get((video, reader))
                if row is not None and row.get(key) is not None:
                    xs.append(j + (i - (len(readers) - 1) / 2) * width)
                    ys.append(row[key])
            color = FRAMEFEED if reader == "framefeed" else PEERS[(i - 1) % len(PEERS)]
            bars = ax.bar(xs, ys, width, label=label, color=color)
            for bar, y in zip(bars, ys):
                ax.annotate(fmt.format(y), (bar.get_x() + bar.get_width() / 2, y), xytext=(0, 2),
                            textcoords="offset points", ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(len(videos)), [v for _, v in videos])
        ax.set_ylabel(ylabel)
        ax.spines[["top", "right"]].set_visible(False)
    axes[0].set_title("10 random 8-frame clips: time per job", fontsize=10)
    axes[1].set_title("peak RSS of the reading process", fontsize=10)
    axes[0].legend(fontsize=8, frameon=False)
    fig.suptitle("Random access: framefeed VideoReader against TorchCodec, decord and video-reader-rs", fontsize=11)
    footer(fig, data)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    save(fig, "random_access")


def full_decode() -> None:
    plain = load("full_decode")
    if plain is None:
        return
    huge = load("full_decode_huge_pages")
    huge_rows = {r["case"]: r for r in huge["rows"]} if huge else {}
    cases = [r for r in plain["rows"]]
    fig, ax = plt.subplots(figsize=SIZE)
    height = 0.27
    ys = list(range(len(cases)))[::-1]
    series = [("ffmpeg -pix_fmt rgb24 (same RGB output)", [r["rgb24_s"] / r["floor_s"] for r in cases], PEERS[0]),
              ("framefeed run", [r["framefeed_s"] / r["floor_s"] for r in cases], FRAMEFEED)]
    if huge_rows:
        series.append(("framefeed run --huge-pages (another run)",
                       [huge_rows[r["case"]]["variant_s"] / huge_rows[r["case"]]["floor_s"]
                        if r["case"] in huge_rows else float("nan") for r in cases], "#7fb3e0"))
    for k, (label, values, color) in enumerate(series):
        offset = (k - (len(series) - 1) / 2) * height
        bars = ax.barh([y - offset for y in ys], values, height, label=label, color=color)
        for bar, v in zip(bars, values):
            if v == v:
                ax.annotate(f"{v:.2f}x", (v, bar.get_y() + bar.get_height() / 2), xytext=(3, 0),
                            textcoords="offset points", va="center", fontsize=7)
    ax.axvline(1.0, color=FLOOR, linewidth=1, linestyle="--")
    ax.text(1.0, ys[-1] - 0.62, " decode floor (ffmpeg -f null) = 1.0", fontsize=8, color=FLOOR, va="bottom")
    ax.set_yticks(ys, [r["case"] for r in cases], fontsize=8)
    ax.set_xlabel("wall time / the decode floor's wall time (lower is better)")
    ax.set_xlim(0, max(max(v for v in s[1] if v == v) for s in series) * 1.15)
    ax.legend(fontsize=8, frameon=False, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=len(series))
    ax.spines[["top", "right"]].set_visible(False)
    fig.suptitle("Full-frame decoding and transforms against the decode floor (2 decoder threads)", fontsize=11)
    footer(fig, plain)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    save(fig, "full_decode")


def service_load() -> None:
    data = load("service_load")
    if data is None:
        return
    fig, axes = plt.subplots(1, 2, figsize=SIZE, gridspec_kw={"width_ratios": [1, 2.2]})
    up = data["uploads"]
    ax = axes[0]
    labels = ["framefeed run\nfiles in turn\n(from the ratio)", "framefeed serve\n8 uploads\nat once"]
    values = [up["cli_frames_per_s_from_ratio"], up["service_frames_per_s"]]
    bars = ax.bar(labels, values, 0.55, color=[PEERS[0], FRAMEFEED])
    for bar, v in zip(bars, values):
        ax.annotate(f"{v:.0f}", (bar.get_x() + bar.get_width() / 2, v), xytext=(0, 2), textcoords="offset points",
                    ha="center", va="bottom", fontsize=8)
    ax.tick_params(axis="x", labelsize=8)
    ax.set_ylabel("frames/s, 1080p, L=8 B=2 (higher is better)")
    ax.set_title(f"Uploads: {up['ratio_to_cli']:.2f}x one CLI process", fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    att = data["attacks"]
    ax = axes[1]
    names = [r["attack"] for r in att["rows"]]
    values = [r["peak_rss_mib"] for r in att["rows"]]
    ys = list(range(len(names)))[::-1]
    bars = ax.barh(ys, values, 0.5, color=FRAMEFEED)
    for bar, row in zip(bars, att["rows"]):
        ax.annotate(f"{row['peak_rss_mib']} MiB\nhonest upload: {row['honest']}",
                    (row["peak_rss_mib"], bar.get_y() + bar.get_height() / 2), xytext=(4, 0),
                    textcoords="offset points", va="center", fontsize=7)
    ax.axvline(att["idle_rss_mib"], color=FLOOR, linewidth=1, linestyle="--")
    ax.set_yticks(ys, [n.replace(": ", ":\n", 1) for n in names], fontsize=8)
    ax.set_xlim(0, max(values) * 2.6)
    ax.set_xlabel(f"server peak RSS, MiB (dashed: idle, {att['idle_rss_mib']} MiB)")
    ax.set_title("Hostile clients, then one honest upload", fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    fig.suptitle("framefeed serve under load (loopback)", fontsize=11)
    fig.text(0.01, 0.01, f"{data['machine']}\n{up['command']}  |  {att['command']}", fontsize=7, color="#555555",
             ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    save(fig, "service_load")


def remote() -> None:
    data = load("remote")
    if data is None:
        return
    readers = data["readers"]
    labels = [r["label"] for r in readers]
    fig, axes = plt.subplots(1, 2, figsize=SIZE)
    colors = [FRAMEFEED if r["name"].startswith("framefeed") else PEERS[0] for r in readers]
    for ax, values, xlabel, fmt in (
            (axes[0], [r["wall_s"] for r in readers], "wall seconds (lower is better)", "{:.2f} s"),
            (axes[1], [r["bytes"] / 1e6 for r in readers], "MB sent by the server (lower is better)", "{:.1f} MB")):
        ys = list(range(len(labels)))[::-1]
        bars = ax.barh(ys, values, 0.5, color=colors)
        for bar, v in zip(bars, values):
            ax.annotate(fmt.format(v), (v, bar.get_y() + bar.get_height() / 2), xytext=(3, 0),
                        textcoords="offset points", va="center", fontsize=8)
        ax.set_yticks(ys, labels, fontsize=8)
        ax.set_xlabel(xlabel)
        ax.set_xlim(0, max(values) * 1.3)
        ax.set_ylim(-0.5, len(labels) - 0.4)
        ax.spines[["top", "right"]].set_visible(False)
    axes[0].axvline(data["local_reader_s"], color=FLOOR, linewidth=1, linestyle="--")
    axes[0].text(data["local_reader_s"], len(readers) - 0.6, f"local file {data['local_reader_s']:.2f} s ",
                 fontsize=7, color=FLOOR, ha="right")
    needed = (data["needed"]["moov_bytes"] + data["needed"]["gop_bytes"]) / 1e6
    axes[1].axvline(needed, color=FLOOR, linewidth=1, linestyle="--")
    axes[1].text(needed, len(readers) - 0.6, f"the index + the clips' GOPs: {needed:.1f} MB ", fontsize=7,
                 color=FLOOR, ha="right")
    fig.suptitle("Remote video: 10 random 8-frame clips of a 300 MB 1080p MP4 over 50 MB/s, 20 ms RTT",
                 fontsize=11)
    footer(fig, data)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    save(fig, "remote")


def main() -> None:
    random_access()
    full_decode()
    service_load()
    remote()


if __name__ == "__main__":
    main()
