"""How much of a first scan is secondary-index upkeep: `spar index` as a user runs it, except that
the ten secondary indexes of files/file_tags are dropped before the scan and re-created after
it (timed separately). An experiment for issue 29, not what SPAR does.
Usage: python benchmarks/scan_index_cost.py --data-dir FRESH_DIR index SHARE --quiet
"""
import sys, time, resource
from spar_desktop.core.library import scanner
from spar_desktop import cli
orig_scan_one = scanner.Scanner.scan_one
DROP = ["ix_files_content_hash","ix_files_folder_id","ix_files_modified_at","ix_files_format","ix_files_status","ix_files_parent_id","ix_files_name_order","ix_files_status_error_path","ix_file_tags_confirmed","ix_file_tags_tag_links","ix_files_date_status"]
saved = {}
def scan_one(self, *a, **k):
    with self.library.engine.begin() as c:
        for name in DROP:
            saved[name] = c.exec_driver_sql(f"select sql from sqlite_master where name='{name}'").scalar()
            c.exec_driver_sql(f"drop index {name}")
    c0 = time.process_time(); t0 = time.perf_counter()
    r = orig_scan_one(self, *a, **k)
    print("scan without 10 secondary indexes: wall", round(time.perf_counter()-t0,2), "cpu", round(time.process_time()-c0,2), file=sys.stderr)
    c0 = time.process_time(); t0 = time.perf_counter()
    with self.library.engine.begin() as c:
        for name in DROP: c.exec_driver_sql(saved[name])
    print("recreating them: wall", round(time.perf_counter()-t0,2), "cpu", round(time.process_time()-c0,2), file=sys.stderr)
    return r
scanner.Scanner.scan_one = scan_one
try: cli.main()
except SystemExit: pass
print("rss", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss//1024, file=sys.stderr)
