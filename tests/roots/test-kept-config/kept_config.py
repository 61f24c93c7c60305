import os
import pathlib
import time

flag = 0
VERSION = 1

if os.environ.get("KEPT_CONFIG_SLOW"):  # a test edits this file while it is being imported
    pathlib.Path(__file__).with_name("importing").touch()
    time.sleep(3)
