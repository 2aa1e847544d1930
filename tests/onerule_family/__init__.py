"""A fourth model family that lives only in the tests: the best single rule ("if feature then class a else
class b"), found by trying every binarized feature. It shows that a family is one package and one entry
in the registry: the command line, the web app, save/load, the exports and the report serve it without
any change outside this package (tests/test_new_family.py)."""
