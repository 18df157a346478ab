import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def vectors(name):
    with open(os.path.join(HERE, "vectors", name)) as f:
        return json.load(f)
