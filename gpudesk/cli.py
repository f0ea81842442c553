"""The command line: the GUI by default, and the same jobs without a window (`--json` for scripts).

Imports are deferred to the command that needs them, so `gpudesk --version` and the GUI's
start-up pay only for what they use.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from gpudesk import APP_NAME, __version__

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INVALID = 3  # `catalogue import`: not a sound bundle (manifest missing or malformed, a checksum differs, bad files)
EXIT_REFUSED = 4  # `catalogue import`: a sound bundle this catalogue does not take (older, or it strands your rows)
EXIT_DAMAGED = 5  # the database file is damaged: `gpudesk repair`
EXIT_LOCKED = 6  # another program holds the database locked
EXIT_NOT_WRITABLE = 7  # the data folder or a file is read-only or not ours to write
EXIT_DISK_FULL = 8  # no space left on the disk
EXIT_MISSING = 9  # a file or folder named does not exist
EXIT_UNEXPECTED = 10  # a fault gpudesk did not expect: the trace is in the log
EXIT_OFFLINE = 11  # the team catalogue's server cannot be reached

EXIT_CODES = (
    (EXIT_OK, "success"),
    (EXIT_FAILED, "the command failed (the message says why)"),
    (EXIT_USAGE, "wrong arguments, or a confirmation is needed"),
    (EXIT_INVALID, "catalogue import: not a sound bundle"),
    (EXIT_REFUSED, "catalogue import: a bundle this catalogue does not take"),
    (EXIT_DAMAGED, f"the database is damaged: run `{APP_NAME} repair`"),
    (EXIT_LOCKED, "the database is locked by another program"),
    (EXIT_NOT_WRITABLE, "the data folder or a file cannot be written (read-only, no permission, a disk I/O error)"),
    (EXIT_DISK_FULL, "the disk is full"),
    (EXIT_MISSING, "a file or folder does not exist"),
    (EXIT_UNEXPECTED, "an unexpected error; the trace is in the log"),
    (EXIT_OFFLINE, "the team catalogue's server cannot be reached"),
)

CATALOGUE_KINDS = ("accelerators", "systems", "models", "cloud", "cloud_prices", "prices", "embodied", "cost_factors", "regions", "interconnects", "sources")


def _catalogue_commands(sub) -> None:
    """gpudesk catalogue list|show|export|import."""
    cat = sub.add_parser("catalogue", help="list or show catalogue entries; export or import a catalogue bundle")
    cat_sub = cat.add_subparsers(dest="action", metavar="ACTION", required=True)
    lst = cat_sub.add_parser("list", help="list entries of one kind (default: all kinds)")
    lst.add_argument("--kind", choices=CATALOGUE_KINDS)
    lst.add_argument("--json", action="store_true", help="print JSON")
    show = cat_sub.add_parser("show", help="show one entry with its sources")
    show.add_argument("id")
    show.add_argument("--json", action="store_true", help="print JSON")
    exp = cat_sub.add_parser("export", help="write the catalogue, your own entries and quotes included, as a bundle")
    exp.add_argument("path", metavar="PATH", help="a .zip file; a folder when PATH does not end in .zip")
    exp.add_argument("--json", action="store_true", help="print JSON")
    quote = cat_sub.add_parser("quote", help="record a vendor quote for an accelerator or a system")
    quote.add_argument("item", metavar="ID", help="the accelerator or system quoted")
    quote.add_argument("usd", metavar="USD", help="the price quoted, in US dollars")
    quote.add_argument("--date", metavar="YYYY-MM-DD", help="the quote's date (default today)")
    quote.add_argument("--supplier", default="", help="who quoted it")
    quote.add_argument("--url", default="", help="a link to the quote")
    quote.add_argument("--notes", default="")
    quote.add_argument("--json", action="store_true", help="print JSON")
    upd = cat_sub.add_parser("import", help="check a catalogue bundle, show what it changes, and apply it")
    upd.add_argument("path", metavar="PATH", help="a bundle (.zip), or a bundle folder")
    upd.add_argument("--dry-run", action="store_true", help="check and show the changes; change nothing")
    upd.add_argument("--yes", "-y", action="store_true", help="apply without asking")
    upd.add_argument("--json", action="store_true", help="print JSON")


def _scenario_commands(sub) -> None:
    """gpudesk estimate and gpudesk compare."""
    est = sub.add_parser("estimate", help="estimate a scenario file")
    est.add_argument("scenario", help="a gpudesk scenario (.json)")
    est.add_argument("--json", action="store_true", help="print JSON")
    est.add_argument("--no-calibration", action="store_true",
                     help="ignore your imported measurements (default: the Preferences' calibration switch)")
    _replay_arguments(est)

    cmp_ = sub.add_parser("compare", help="compare the configurations of a scenario file")
    cmp_.add_argument("scenario", help="a gpudesk scenario (.json) with a 'compare' list")
    cmp_.add_argument("--pdf", metavar="OUT.pdf", help="write the procurement PDF")
    cmp_.add_argument("--csv", metavar="OUT.csv", help="write the comparison table as CSV")
    cmp_.add_argument("--json", action="store_true", help="print JSON")
    cmp_.add_argument("--author", default=None, help="author printed on the PDF cover")
    cmp_.add_argument("--organisation", default=None, help="organisation printed on the PDF cover")
    cmp_.add_argument("--page-size", choices=("A4", "Letter"), default=None)
    cmp_.add_argument("--no-calibration", action="store_true",
                      help="ignore your imported measurements (default: the Preferences' calibration switch)")
    _replay_arguments(cmp_)


def _benchmark_commands(sub) -> None:
    """gpudesk import and gpudesk measurements list|export."""
    imp = sub.add_parser("import", help="import benchmark result files")
    imp.add_argument("files", nargs="+", metavar="FILE")
    imp.add_argument("--dry-run", action="store_true", help="read and check, store nothing")
    imp.add_argument("--json", action="store_true", help="print JSON")
    imp.add_argument("--gpu", metavar="ID", help="accelerator id for files that do not name their hardware")
    imp.add_argument("--count", type=int, metavar="N", help="accelerator count for such files")
    mea = sub.add_parser(
        "measurements", help="list or export the stored benchmark measurements with their estimates",
        description="The imported measurements, each with gpudesk's estimate of the same setup (low, likely, high), "
                    "the signed error (estimate - measured) / measured, and why a row was not compared: the columns "
                    "of the Benchmarks view's CSV export.")
    mea_sub = mea.add_subparsers(dest="action", metavar="ACTION", required=True)
    mea_list = mea_sub.add_parser("list", help="print the measurements (a table; --json or --csv for scripts)")
    mea_fmt = mea_list.add_mutually_exclusive_group()
    mea_fmt.add_argument("--json", action="store_true", help="print JSON: one object per measurement")
    mea_fmt.add_argument("--csv", action="store_true", help="print CSV")
    mea_list.add_argument("--accelerator", metavar="ID", help="only the measurements of this catalogue accelerator")
    mea_exp = mea_sub.add_parser("export", help="write the measurements to a file: CSV with the estimates, or "
                                                "gpudesk benchmark JSON (imported again with `gpudesk import`)")
    mea_exp.add_argument("path", metavar="PATH", help="the file to write (.csv or .json, unless --csv/--json says)")
    exp_fmt = mea_exp.add_mutually_exclusive_group()
    exp_fmt.add_argument("--json", action="store_true", help="write gpudesk benchmark JSON")
    exp_fmt.add_argument("--csv", action="store_true", help="write CSV with the estimates")
    mea_exp.add_argument("--accelerator", metavar="ID", help="only the measurements of this catalogue accelerator")


def _team_commands(sub) -> None:
    """gpudesk team check|set-password|copy."""
    team = sub.add_parser("team", help="a team catalogue on PostgreSQL: test the connection, keep the password, "
                                       "refresh the local copy",
                          description="The team catalogue is the settings' database_url (or --database-url), a "
                                      "PostgreSQL URL without a password. The password comes from, in order: the "
                                      "URL, GPUDESK_DB_PASSWORD when set, the system keyring (unless settings' "
                                      "password_source is none), then PostgreSQL's own PGPASSWORD, ~/.pgpass "
                                      "(PGPASSFILE) or PGSERVICE, or none for trust, peer, certificate or GSS "
                                      "sign-in. `team check` says which was used.")
    team_sub = team.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = team_sub.add_parser("check", help="connect once and say what was found: server, role, catalogue")
    check.add_argument("--json", action="store_true", help="print JSON")
    pw = team_sub.add_parser("set-password", help="keep the team catalogue's password in the system keyring")
    pw.add_argument("--stdin", action="store_true", help="read the password from standard input (scripts)")
    team_sub.add_parser("copy", help="write the local copy that opens read-only when the server is away")


def _database_commands(sub) -> None:
    """gpudesk repair and gpudesk backups."""
    rep = sub.add_parser("repair", help="repair a damaged database: rebuild it keeping your rows, or restore a backup")
    rep.add_argument("--from-backup", metavar="NAME",
                     help="restore this backup (a name from `gpudesk backups`, or 'newest') instead of rebuilding")
    rep.add_argument("--force", action="store_true", help="rebuild even when the database passes its check")
    rep.add_argument("--json", action="store_true", help="print JSON")
    bak = sub.add_parser("backups", help="list the database's backups, newest first, or make one now")
    bak.add_argument("--now", action="store_true", help="make a backup now")
    bak.add_argument("--json", action="store_true", help="print JSON")


def build_parser(commands: bool = True) -> argparse.ArgumentParser:
    """The command line's parser; without `commands`, only the options of the app's window (what a
    plain `gpudesk` start needs: the commands' parsers take some 10 ms to build)."""
    parser = argparse.ArgumentParser(
        prog=APP_NAME,
        description="Choose AI compute and defend the choice. Without a command, opens the app.",
        epilog="exit status:\n" + "\n".join(f"  {code:>2}  {meaning}" for code, meaning in EXIT_CODES),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{APP_NAME} {__version__}")
    parser.add_argument("--quit-after-startup", action="store_true",
                        help="open the window, quit with status 0 once the catalogue is shown")
    parser.add_argument("--quit-after-first-frame", action="store_true",
                        help="open the window, quit with status 0 once its first frame is painted (start-up bench)")
    parser.add_argument("--self-test", action="store_true",
                        help="check the installation offscreen: views, catalogue, estimate, chart, PDF")
    parser.add_argument("--database-url", metavar="URL", help="use this SQLAlchemy database URL")
    if not commands:
        parser.set_defaults(command=None)
        return parser
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _catalogue_commands(sub)
    _scenario_commands(sub)
    _benchmark_commands(sub)
    _database_commands(sub)
    _team_commands(sub)
    return parser


_WINDOW_FLAGS = ("--quit-after-startup", "--quit-after-first-frame", "--self-test")


def _window_only(argv: Sequence[str]) -> bool:
    """Whether `argv` holds nothing but the window's options (then no command's parser is built)."""
    rest = list(argv)
    while rest:
        arg = rest.pop(0)
        if arg == "--database-url" and rest and not rest[0].startswith("-"):
            rest.pop(0)
        elif not (arg in _WINDOW_FLAGS or arg.startswith("--database-url=")):
            return False
    return True


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(commands=not _window_only(argv))
    args = parser.parse_args(argv)
    if args.self_test:
        from gpudesk.selftest import run_self_test

        return run_self_test()
    if args.command is None:
        from gpudesk.ui.app import run_app

        return run_app(quit_after_startup=args.quit_after_startup, database_url=args.database_url,
                       quit_after_first_frame=args.quit_after_first_frame)
    try:
        handler = {
            "catalogue": _catalogue,
            "estimate": _estimate,
            "compare": _compare,
            "import": _import,
            "measurements": _measurements,
            "repair": _repair,
            "backups": _backups,
            "team": _team,
        }[args.command]
        code = handler(args)
        if code == EXIT_OK and _READ_ONLY_NOTICE:
            print(f"{APP_NAME}: note: {_READ_ONLY_NOTICE[-1]}", file=sys.stderr)
        return code
    except BrokenPipeError:  # `gpudesk catalogue list | head`
        return EXIT_OK
    except CliError as exc:
        print(f"{APP_NAME}: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - the one place every other failure becomes one line
        message, code = _describe_failure(exc)
        print(f"{APP_NAME}: {message}", file=sys.stderr)
        return code


def _describe_failure(exc: Exception) -> tuple[str, int]:
    """A known fault as one line and its exit status; anything else logged with its trace."""
    import errno
    import sqlite3

    from gpudesk.core.catalogue.backup import DamagedDatabaseError, is_damage
    from gpudesk.core.catalogue.db import SchemaError, UrlError
    from gpudesk.core.catalogue.team import ServerUnreachable, TeamError

    if isinstance(exc, UrlError):
        return str(exc), {"missing": EXIT_MISSING, "not_writable": EXIT_NOT_WRITABLE}.get(exc.kind, EXIT_USAGE)
    if isinstance(exc, ServerUnreachable):
        return f"{exc}; nothing was changed", EXIT_OFFLINE
    if isinstance(exc, TeamError | SchemaError):
        return str(exc), EXIT_FAILED
    if isinstance(exc, DamagedDatabaseError):
        return (f"{exc.path}: the database is damaged ({exc.detail}); run `{APP_NAME} repair` "
                "to rebuild it keeping your rows, or to restore a backup", EXIT_DAMAGED)
    orig = getattr(exc, "orig", None) if type(exc).__module__.startswith("sqlalchemy") else exc
    if isinstance(orig, sqlite3.Error):
        text = str(orig).lower()
        where = _database_file_name()
        if is_damage(orig):
            detail = " ".join(str(orig).split())
            detail = detail if len(detail) <= 160 else detail[:159] + "…"
            return (f"{where}: the database is damaged ({detail}); run `{APP_NAME} repair`", EXIT_DAMAGED)
        if "locked" in text or "busy" in text:
            return (f"{where}: the database is busy, locked by another program (another gpudesk?) that is "
                    "writing to it; nothing was changed: try again when it is done", EXIT_LOCKED)
        if "readonly" in text or "read-only" in text or "unable to open" in text or "permission" in text:
            return (f"{where}: the database cannot be written ({orig}); check that its folder is writable",
                    EXIT_NOT_WRITABLE)
        if "disk is full" in text or "full" in text or ("disk i/o" in text and _disk_nearly_full(where)):
            return f"{where}: the disk is full; free some space and try again", EXIT_DISK_FULL
        if "disk i/o" in text:
            return (f"{where}: the disk could not read or write the database (disk I/O error); check the disk "
                    "(removed, failing, or out of space?) and try again", EXIT_NOT_WRITABLE)
    if isinstance(exc, OSError):
        place = exc.filename or _database_file_name()
        if exc.errno == errno.ENOSPC:
            return f"{place}: the disk is full; free some space and try again", EXIT_DISK_FULL
        if isinstance(exc, PermissionError) or exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return (f"{place}: cannot be written ({exc.strerror or exc}); check that the folder is writable "
                    "and not on a read-only disk", EXIT_NOT_WRITABLE)
        if isinstance(exc, FileNotFoundError):
            return f"{place}: no such file or folder", EXIT_MISSING
    from gpudesk.core.logs import log_exception

    log = log_exception("unexpected error in the command line", exc)
    where = f"details in {log}" if log else "the log could not be written either"
    detail = " ".join(str(getattr(exc, "orig", None) or exc).split())  # one line: no SQL, no parameters
    detail = detail if len(detail) <= 200 else detail[:199] + "…"
    return f"unexpected error ({type(exc).__name__}: {detail}); {where}", EXIT_UNEXPECTED


def _disk_nearly_full(place: str) -> bool:
    """Whether the disk holding `place` has less than a megabyte free (SQLite reports a full disk
    met while growing its shared-memory file as an I/O error)."""
    import shutil
    from pathlib import Path

    try:
        return shutil.disk_usage(Path(place).parent).free < 1 << 20
    except OSError:
        return False


def _database_file_name() -> str:
    try:
        return str(_database_file(None))
    except Exception:  # noqa: BLE001 - only naming the place
        return "the database"


class CliError(Exception):
    """A failure to report in one line on stderr with a non-zero exit status (`code`)."""

    def __init__(self, message: str, code: int = EXIT_FAILED):
        super().__init__(message)
        self.code = code


def _open(args):
    from gpudesk.core.catalogue import open_catalogue
    from gpudesk.core.catalogue.bundle import BundleError

    try:
        catalogue = open_catalogue(args.database_url)
    except BundleError as exc:
        raise CliError(str(exc)) from exc
    if isinstance(catalogue.read_only, str) and catalogue.read_only:
        _READ_ONLY_NOTICE.append(catalogue.read_only)
    return catalogue


# a database opened read-only: said once after a command that only read it succeeds (a command
# that writes fails with its own one-line message instead)
_READ_ONLY_NOTICE: list[str] = []


def _database_file(args):
    """The SQLite file of the catalogue (--database-url, the settings' URL, or the default)."""
    from pathlib import Path

    from gpudesk.core import paths

    url = getattr(args, "database_url", None) if args is not None else None
    if not url:
        from gpudesk.core.settings import load_settings

        url = load_settings().database_url or None
    if not url:
        return paths.database_path()
    if not url.startswith("sqlite:///") or url == "sqlite:///:memory:":
        raise CliError(f"{url}: backups and repair work on an SQLite database file only")
    return Path(url.removeprefix("sqlite:///"))


def _print_json(data) -> None:
    import json  # not for the window's start-up

    json.dump(data, sys.stdout, indent=2, ensure_ascii=False, allow_nan=False)
    sys.stdout.write("\n")


# ------------------------------------------------------------------------ catalogue
def _catalogue(args) -> int:
    if args.action == "export":
        return _catalogue_export(args)
    if args.action == "import":
        return _catalogue_import(args)
    cat = _open(args)
    if args.action == "quote":
        return _catalogue_quote(args, cat)
    if args.action == "list":
        kinds = [args.kind] if args.kind else [k for k in CATALOGUE_KINDS]
        if args.json:
            if args.kind:
                _print_json([cat.to_json(args.kind, r) for r in cat.items(args.kind)])
            else:
                _print_json({k: [cat.to_json(k, r) for r in cat.items(k)] for k in kinds})
            return EXIT_OK
        from gpudesk.core.catalogue.fields import KIND_LABELS, KINDS

        for kind in kinds:
            cols = [f for f in KINDS[kind] if f.column]
            rows = [[_cell(r.get(f.name), f.name) for f in cols] for r in cat.items(kind)]
            print(f"{KIND_LABELS[kind]} ({len(rows)}), catalogue {cat.version}")
            _print_table([f.header() for f in cols], rows)
            print()
        return EXIT_OK
    found = cat.find(args.id)
    if found is None:
        raise CliError(f"no catalogue entry has the id '{args.id}' (try `{APP_NAME} catalogue list`)")
    kind, record = found
    data = cat.to_json(kind, record)
    if args.json:
        _print_json(data)
        return EXIT_OK
    from gpudesk.core.catalogue.fields import KIND_NOUNS, KINDS
    from gpudesk.core.catalogue.reading import provenance

    print(f"{KIND_NOUNS[kind]} {record['id']}  ({record.get('origin')})")
    if provenance(record):
        print(f"  {provenance(record)}")
    width = max(len(f.header()) for f in KINDS[kind])
    for spec in KINDS[kind]:
        value = record.get(spec.name)
        if value is None or value == "":
            continue
        line = f"  {spec.header():<{width}}  {_cell(value, spec.name)}"
        src = data.get("sources", {}).get(spec.name)
        if src and spec.figure and src.get("derived"):
            titles = "; ".join(dict.fromkeys(i["title"] for i in src["derived"]["input_sources"]))
            line += f"   [{src['derived']['formula']}; inputs from {titles}]"
        elif src and spec.figure:
            line += f"   [{src['title']}, {src['date']}]"
        print(line)
    urls = {s["url"] for s in data.get("sources", {}).values() if s and s.get("url")}
    if urls:
        print("  sources:")
        for url in sorted(urls):
            print(f"    {url}")
    return EXIT_OK


def _writable(cat) -> None:
    """A database opened read-only: a writing command stops here with the one-line message."""
    why = getattr(cat, "not_writable", "")
    if why:
        _READ_ONLY_NOTICE.clear()
        raise CliError(f"{why}; nothing was changed", EXIT_NOT_WRITABLE)


def _catalogue_quote(args, cat) -> int:
    from gpudesk.core.catalogue import EditError
    from gpudesk.core.catalogue.reading import provenance

    _writable(cat)
    try:
        record = cat.add_price_quote(args.item, args.usd, when=args.date, supplier=args.supplier, url=args.url,
                                     notes=args.notes)
    except EditError as exc:
        raise CliError(f"quote not recorded: {exc}") from exc
    if args.json:
        _print_json(cat.to_json("prices", record))
    else:
        print(f"quote {record['id']}: {record['item']} ${record['usd']:,.0f} on {record['date']}; {provenance(record)}")
    return EXIT_OK


def _team(args) -> int:
    from gpudesk.core.catalogue import team
    from gpudesk.core.settings import load_settings

    settings = load_settings()
    url = args.database_url or settings.database_url
    if not team.is_server_url(url):
        raise CliError("no team catalogue is set: give --database-url postgresql+psycopg://user@host/database, "
                       "or set it in Preferences > Team catalogue")
    if args.action == "set-password":
        import getpass

        password = sys.stdin.readline().rstrip("\n") if args.stdin else getpass.getpass(
            f"Password for {team.keyring_account(url)}: ")
        if not password:
            raise CliError("no password given; nothing was stored")
        team.store_password(url, password)
        print(f"the password for {team.keyring_account(url)} is in the system keyring")
        return EXIT_OK
    if args.action == "copy":
        catalogue = _open(args)
        path = team.save_local_copy(catalogue.engine, url)
        print(f"local copy of {team.display_url(url)} written to {path}")
        return EXIT_OK
    found = team.probe(url, settings.password_source)
    if args.json:
        from dataclasses import asdict

        _print_json({"url": team.display_url(url), **asdict(found)})
    else:
        print(f"Team catalogue {team.display_url(url)}")
        for line in found.lines():
            print(f"  {line}")
    return EXIT_OK


def _catalogue_export(args) -> int:
    from gpudesk.core.catalogue.exchange import ExchangeError, export_bundle

    cat = _open(args)
    try:
        result = export_bundle(cat, args.path)
    except ExchangeError as exc:
        raise CliError(str(exc)) from exc
    if args.json:
        _print_json(result.to_json())
    else:
        print(result.format_text())
    return EXIT_OK


def _catalogue_import(args) -> int:
    """Check the bundle, show what it changes, and apply it in one transaction: with --yes, or
    when the person at the terminal says so."""
    from gpudesk.core.catalogue.exchange import ExchangeError, apply_update, plan_update

    cat = _open(args)
    try:
        plan = plan_update(cat, args.path)
    except ExchangeError as exc:
        raise CliError(str(exc), EXIT_INVALID if exc.reason == "invalid" else EXIT_REFUSED) from exc
    apply = args.yes and not args.dry_run and not plan.empty
    if not (apply or args.dry_run or plan.empty):
        interactive = not args.json and sys.stdin.isatty() and sys.stdout.isatty()
        if not interactive:
            if not args.json:
                print(plan.format_text())
            raise CliError("nothing was changed: add --yes to apply this bundle, or --dry-run to only check it",
                           EXIT_USAGE)
        print(plan.format_text())
        try:
            answer = input("\nApply these changes to your catalogue? [y/N] ")
        except EOFError:
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            print("Nothing was changed.")
            return EXIT_FAILED
        apply = True
    elif not args.json:
        print(plan.format_text())
    if apply:
        try:
            apply_update(cat, plan)
        except ExchangeError as exc:
            raise CliError(str(exc), EXIT_INVALID if exc.reason == "invalid" else EXIT_REFUSED) from exc
    if args.json:
        _print_json(plan.to_json() | {"dry_run": bool(args.dry_run), "applied": apply})
    elif apply:
        s = plan.summary()
        print(f"\nApplied: catalogue {plan.version}, {s['added']} added, {s['changed']} changed, {s['removed']} removed.")
    elif args.dry_run and not plan.empty:
        print("\nDry run: nothing was changed.")
    return EXIT_OK


def _cell(value, field: str = "") -> str:
    from gpudesk.core.format import format_number

    return format_number(value, field)


def _print_table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    widths = [min(w, 40) for w in widths]
    print("  ".join(h[:w].ljust(w) for h, w in zip(headers, widths)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(c[:w].ljust(w) for c, w in zip(row, widths)).rstrip())


# ------------------------------------------------------------------------ estimate / compare / import
def _calibrations(args, catalogue) -> tuple:
    """The user's calibrations unless --no-calibration (or the Preferences switch is off)."""
    if args.no_calibration:
        return ()
    from gpudesk.core.benchmarks.calibration import active_calibrations

    return active_calibrations(catalogue)


def _replay_arguments(parser) -> None:
    parser.add_argument("--as-of", metavar="YYYY-MM-DD",
                        help="replay with the prices known on this date (quotes, list, street and cloud prices)")
    parser.add_argument("--no-embodied", action="store_true",
                        help="leave out the embodied (manufacturing) CO2 of owned hardware")


def _scenario_and_catalogue(args):
    """The scenario file named on the command line and the catalogue, or a CliError naming the problem."""
    from dataclasses import replace

    from gpudesk.core.scenario import ScenarioError, load_scenario, parse_scenario

    try:
        scenario = load_scenario(args.scenario)
        finance = dict(scenario.finance)
        if getattr(args, "as_of", None):
            finance["as_of"] = args.as_of
        if getattr(args, "no_embodied", False):
            finance["embodied"] = False
        if finance != scenario.finance:
            # the command line's choices go through the scenario's own checks (a bad date names --as-of)
            parse_scenario({"gpudesk_scenario": 1, "name": "--as-of / --no-embodied", "workload": {"kind": "train", "params": 1e9},
                            "cluster": [{"item": "x"}], "finance": finance}, "the command line")
            scenario = replace(scenario, finance=finance)
    except ScenarioError as exc:
        raise CliError(str(exc)) from exc
    return scenario, _open(args)


def _estimate(args) -> int:
    from gpudesk.core.resolve import ResolveError, estimate_scenario
    from gpudesk.core.summary import format_estimate

    scenario, cat = _scenario_and_catalogue(args)
    try:
        result = estimate_scenario(scenario, cat, calibrations=_calibrations(args, cat))
    except ResolveError as exc:
        raise CliError(f"{args.scenario}: {exc}") from exc
    if args.json:
        _print_json(result.to_json())
    else:
        print(format_estimate(scenario, result))
    return EXIT_OK


def _compare(args) -> int:
    from gpudesk.core.compare import build_comparison, comparison_csv, comparison_json, format_comparison
    from gpudesk.core.resolve import ResolveError

    scenario, cat = _scenario_and_catalogue(args)
    try:
        comparison = build_comparison(scenario, cat, calibrations=_calibrations(args, cat))
    except ResolveError as exc:
        raise CliError(f"{args.scenario}: {exc}") from exc
    if args.csv:
        from gpudesk.core.fileio import atomic_write_text

        atomic_write_text(args.csv, comparison_csv(comparison))
    if args.pdf:
        from gpudesk.core.settings import load_settings
        from gpudesk.ui.render.pdf import render_comparison_pdf

        settings = load_settings()
        page_size = args.page_size or settings.page_size
        render_comparison_pdf(
            comparison,
            args.pdf,
            author=args.author if args.author is not None else settings.author,
            organisation=args.organisation if args.organisation is not None else settings.organisation,
            page_size=page_size,
        )
        from gpudesk.core.report.history import try_record_comparison

        problem = try_record_comparison(comparison, args.pdf, page_size=page_size, origin="cli")
        if problem:  # the PDF is written; only the list of reports misses it
            print(f"gpudesk: the report was not added to the Reports list: {problem}", file=sys.stderr)
    if args.json:
        _print_json(comparison_json(comparison))
    elif not (args.pdf or args.csv):
        print(format_comparison(comparison))
    else:
        for path in (args.pdf, args.csv):
            if path:
                print(f"wrote {path}", file=sys.stderr)
    return EXIT_OK


def _import(args) -> int:
    from gpudesk.core.benchmarks.store import import_files

    cat = _open(args)
    report = import_files(cat, args.files, dry_run=args.dry_run, gpu=args.gpu, count=args.count)
    if args.json:
        _print_json(report.to_json())
    else:
        print(report.format_text())
    return EXIT_OK if report.ok else EXIT_FAILED


# ------------------------------------------------------------------------ measurements
def _measurements(args) -> int:
    from gpudesk.core.benchmarks.summary import versus_frame
    from gpudesk.core.benchmarks.versus import compare_all

    cat = _open(args)
    acc = args.accelerator.strip() if args.accelerator else None
    if acc is not None and cat.get("accelerators", acc) is None:
        raise CliError(f"--accelerator {acc}: not an accelerator in the catalogue (its ids: `{APP_NAME} catalogue "
                       "list --kind accelerators`); nothing listed", EXIT_USAGE)
    if args.action == "export":
        kind = "json" if args.json else "csv" if args.csv else str(args.path).lower().rsplit(".", 1)[-1]
        if kind not in ("csv", "json"):
            raise CliError(f"{args.path}: say --csv or --json (or name a .csv or .json file); nothing written",
                           EXIT_USAGE)
    # the same comparison as the Benchmarks view: each measurement against the default estimate
    versus = compare_all(cat, **({"accelerator_id": acc} if acc else {}))
    if args.action == "export":
        return _measurements_export(args.path, kind, versus, acc)
    frame = versus_frame(versus)
    if args.csv:
        sys.stdout.write(frame.to_csv(index=False, float_format="%.6g"))
    elif args.json:
        _print_json([{k: _plain(v) for k, v in row.items()} for row in frame.to_dict(orient="records")])
    elif frame.empty:
        print("No measurements stored" + (f" for {acc}" if acc else "") + f". Import result files with `{APP_NAME} "
              "import FILE...`.")
    else:
        print(_measurements_table(frame))
    return EXIT_OK


def _plain(value):
    """A table cell as JSON: missing values as null, numpy numbers as Python numbers."""
    import math

    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if type(value).__module__ == "numpy":
        value = value.item()
    try:
        import pandas as pd

        if value is pd.NA:
            return None
    except ImportError:  # pragma: no cover - pandas is a dependency
        pass
    return value


def _measurements_export(path, kind: str, versus, acc: str | None) -> int:
    import json

    from gpudesk.core.fileio import atomic_write_text

    if kind == "csv":
        from gpudesk.core.benchmarks.summary import write_csv

        n = write_csv(versus, path)
    else:
        from gpudesk.core.benchmarks.gpudesk_schema import export_measurements

        doc = export_measurements([v.measurement for v in versus], description="exported by `gpudesk measurements "
                                  "export`" + (f" (accelerator {acc})" if acc else ""))
        atomic_write_text(path, json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        n = len(versus)
    print(f"wrote {n:,} measurement(s) to {path}", file=sys.stderr)
    return EXIT_OK


def _measurements_table(frame) -> str:
    def num(value, digits=4) -> str:
        value = _plain(value)
        return "" if value is None else f"{value:.{digits}g}"

    head = ("id", "accelerator", "metric", "statistic", "measured", "unit", "estimate", "error", "file")
    rows = []
    for row in frame.to_dict(orient="records"):
        count, acc = _plain(row["accelerator_count"]), _plain(row["accelerator_id"])
        hardware = f"{count} × {acc}" if acc else ("CPU" if count == 0 else "?")
        error = _plain(row["error"])
        rows.append((str(_plain(row["id"]) or ""), hardware, row["metric"], row["statistic"], num(row["measured"]),
                     row["unit"], num(row["estimated_likely"]), f"{error:+.0%}" if error is not None else "-",
                     row["source_file"]))
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [head, *rows]]
    compared = int(frame["compared"].sum())
    lines.append(f"{len(rows):,} measurement(s), {compared:,} compared with an estimate (error = (estimate - "
                 "measured) / measured; `--json` or `--csv` give every column, why a row was not compared included)")
    return "\n".join(lines)


# ------------------------------------------------------------------------ repair / backups
def _repair(args) -> int:
    from gpudesk.core.catalogue import backup
    from gpudesk.core.catalogue.repair import rebuild

    database = _database_file(args)
    if args.from_backup:
        name = args.from_backup
        if name == "newest":
            newest = backup.newest_good_backup(database)
            if newest is None:
                raise CliError(f"{backup.backups_dir(database)}: there is no sound backup to restore")
            name = newest.name
        try:
            result = backup.restore_backup(name, database)
        except backup.BackupError as exc:
            raise CliError(str(exc)) from exc
        if args.json:
            _print_json({"restored": result.backup.to_json(), "database": str(result.database),
                         "previous_file": str(result.aside) if result.aside else None})
        else:
            print(result.format_text())
        return EXIT_OK
    problem = backup.check_file(database) or backup.undecodable_text(database)
    if problem is None and not args.force:
        if args.json:
            _print_json({"database": str(database), "damaged": False})
        else:
            print(f"{database}: the database passed its check; nothing to repair "
                  "(--force rebuilds it anyway, --from-backup restores a backup)")
        return EXIT_OK
    report = rebuild(database)
    if args.json:
        _print_json(report.to_json())
    else:
        print(report.format_text())
    return EXIT_OK


def _backups(args) -> int:
    from gpudesk.core.catalogue import backup

    database = _database_file(args)
    if args.now:
        made = backup.make_backup(database, "manual")
        if made is None:
            raise CliError(f"{database}: there is no database to back up yet", EXIT_MISSING)
        if not args.json:
            print(f"wrote {made}")
    found = backup.list_backups(database)
    if args.json:
        _print_json([b.to_json() for b in found])
        return EXIT_OK
    if not found:
        print(f"No backups yet in {backup.backups_dir(database)}.")
        return EXIT_OK
    print(f"Backups of {database}, newest first (restore one with `{APP_NAME} repair --from-backup NAME`):")
    for info in found:
        print(f"  {info.name}\n      {info.describe()}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
