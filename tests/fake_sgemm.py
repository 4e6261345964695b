"""What the script tests' stand-ins for the sgemm binary share: the stand-ins the tests write
import this, to write a result row as `sgemm ... --csv FILE` does and to fail verification
as it does."""
import csv
import os
import sys


def append_row(path, columns, row):
    """Append `row` (a dict) to the CSV at `path` in `columns`, the header first where the file is new."""
    new_file = not os.path.exists(path)
    with open(path, "a", newline="") as file:
        writer = csv.writer(file, lineterminator="\n")
        if new_file:
            writer.writerow(columns)
        writer.writerow([row[column] for column in columns])


def fail_verification():
    """Say why in one line on stderr and exit 1, as sgemm does after a failed verification."""
    print("sgemm: error: C[0][0] = 1 but the reference is 2", file=sys.stderr)
    sys.exit(1)
