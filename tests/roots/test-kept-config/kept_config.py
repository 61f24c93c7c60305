import os
import pathlib
import time

flag = 0
VERSION = 1
# Data the module reads when it is imported: a kept worker holds what it read then.
_data = pathlib.Path(__file__).with_name("kept_data.txt")
DATA = _data.read_text().strip() if _data.exists() else ""

if os.environ.get("KEPT_CONFIG_SLOW"):  # a test edits this file while it is being imported
    pathlib.Path(__file__).with_name("importing").touch()
    time.sleep(3)
