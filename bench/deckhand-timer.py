"""Times Deckhand's own rendering engine on a stream of documents, for
`npm run bench:render -- --deckhand-python PY`. Run with a Python that can
import Deckhand (its source on PYTHONPATH, its requirements installed).
Prints one JSON line: the median of five renders after a warm-up (each on
a fresh copy of the documents), without and with Deckhand's own
pre-validation, and the median time of reading the YAML."""
import copy
import json
import logging
import statistics
import sys
import time

logging.disable(logging.CRITICAL)

from oslo_config import cfg  # noqa: E402
from deckhand.conf import config  # noqa: E402
from deckhand.engine import layering  # noqa: E402
import yaml  # noqa: E402  (Deckhand's import makes PyYAML use libyaml when it can)

try:
    config.register_opts(cfg.CONF)
except Exception:  # already registered on import
    pass
cfg.CONF([], project='deckhand', default_config_files=[])

text = open(sys.argv[1]).read()


def median_ms(run):
    run()
    times = []
    for _ in range(5):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 1)


docs = [d for d in yaml.safe_load_all(text) if d is not None]
load_ms = median_ms(lambda: [d for d in yaml.safe_load_all(text) if d is not None])


def render(validate):
    def run():
        layering.DocumentLayering(copy.deepcopy(docs), validate=validate, fail_on_missing_sub_src=False).render()
    return run


print(json.dumps({'documents': len(docs), 'loadMs': load_ms, 'renderMs': median_ms(render(False)), 'renderValidatedMs': median_ms(render(True))}))
