# A page that no longer says what torch does: the user guide shows this build's real output.
extensions = ["sphinx_autocast_demo"]
