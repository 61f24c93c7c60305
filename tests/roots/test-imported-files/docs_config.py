flag = 0
VERSION = 1
