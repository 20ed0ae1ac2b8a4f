"""Seed 001E's Fig. 6: acceptance of DOPA's PARTITION with OPA and with deadline monotonic, three
panels, as CSV and PNG files."""

from __future__ import annotations

from pathlib import Path

from rtnetlab.errors import UserError

#: Seed 001E, Fig. 6: panel → (x label, file stem, paper's reference point as (x, OPA, DM)).
DOPA_PANELS = {
    "density": ("total density", "fig6a_density", (9.0, 0.52, 0.16)),
    "processors": ("processors", "fig6b_processors", (9.0, 0.70, 0.30)),
    "applications": ("applications", "fig6c_applications", (40.0, 0.69, 0.34)),
}


def dopa_fig6(
    out_dir: Path,
    sets: int = 100,
    points: int = 10,
    seed: int = 1,
    dm_key: str = "local-window",
    local_test: str = "release-jitter",
    threads: int = 2,
) -> dict[str, list[tuple[float, float, float]]]:
    """The three curves of seed 001E's Fig. 6 (acceptance of PARTITION with OPA and with deadline
    monotonic), as CSV and PNG files in `out_dir`; returns the rows per panel."""
    import csv
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rtnetlab import _core
    from rtnetlab.io import output as outfiles

    if out_dir.exists() and not out_dir.is_dir():
        raise UserError(f"--out-dir: {out_dir}: is not a directory")
    results = {}
    for panel, (label, stem, (px, popa, pdm)) in DOPA_PANELS.items():
        try:
            rows = _core.dopa_fig6(panel, points, sets, seed, dm_key, local_test, threads)
        except _core.ChoiceError as e:
            # The engine names the argument and lists its values; the option is ours to name.
            argument, reason = e.args
            option = {"dm_key": "--dm-key", "local_test": "--local-test"}.get(argument, argument)
            raise UserError(f"{option}: {reason}") from None
        except ValueError as e:
            raise UserError(str(e)) from None
        results[panel] = rows
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow([label.replace(" ", "_"), "opa_acceptance", "dm_acceptance"])
        w.writerows(rows)
        outfiles.atomic_write(out_dir / f"{stem}.csv", buf.getvalue())
        fig, ax = plt.subplots(figsize=(5, 3.4))
        ax.plot([r[0] for r in rows], [r[1] for r in rows], "o-", label="OPA")
        ax.plot([r[0] for r in rows], [r[2] for r in rows], "s--", label=f"DM ({dm_key})")
        ax.plot([px], [popa], "k*", label="paper: OPA")
        ax.plot([px], [pdm], "kx", label="paper: DM")
        ax.set_xlabel(label)
        ax.set_ylabel("accepted sets")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        png = io.BytesIO()
        fig.savefig(png, format="png", dpi=120)
        plt.close(fig)
        outfiles.atomic_write(out_dir / f"{stem}.png", png.getvalue())
    return results
