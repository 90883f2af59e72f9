# SPDX-License-Identifier: Apache-2.0
"""The OpenTelemetry Collector's names for OTLP metrics in Prometheus (its
prometheus and prometheusremotewrite exporters, name normalization on, the
default), written from the rules its documentation states
(pkg/translator/prometheus in opentelemetry-collector-contrib, "Full
normalization"):

- the name is split into words at every character that is not a letter or a
  digit, and the words are joined with "_";
- the unit's main part (before "/") is appended as a word unless it is empty or
  an annotation in braces ({op}); UCUM units map to Prometheus base-unit words
  (s -> seconds, By -> bytes, ...; "1" -> none), other units are cleaned to
  words; a word the name already has is not appended again;
- the unit's "per" part (after "/") appends "per" and its word (s -> second, ...)
  under the same conditions;
- a monotonic sum (a counter) gets "total" as its last word (an earlier "total"
  word is removed);
- a gauge with unit "1" gets "ratio" as its last word;
- a name that starts with a digit gets a leading "_".

Attributes become labels: every character that is not a letter, a digit or "_"
becomes "_", and a key that starts with a digit gets "key_" in front.
Stdlib only."""
import re

UNIT_WORDS = {
    "d": "days", "h": "hours", "min": "minutes", "s": "seconds", "ms": "milliseconds", "us": "microseconds",
    "ns": "nanoseconds", "By": "bytes", "KiBy": "kibibytes", "MiBy": "mebibytes", "GiBy": "gibibytes",
    "TiBy": "tibibytes", "KBy": "kilobytes", "MBy": "megabytes", "GBy": "gigabytes", "TBy": "terabytes",
    "m": "meters", "V": "volts", "A": "amperes", "J": "joules", "W": "watts", "g": "grams", "Cel": "celsius",
    "Hz": "hertz", "1": "", "%": "percent",
}
PER_UNIT_WORDS = {"s": "second", "m": "minute", "h": "hour", "d": "day", "w": "week", "mo": "month", "y": "year"}


def words(text):
    return [w for w in re.split(r"[^0-9A-Za-z]+", text) if w]


def prometheus_name(name, unit, kind, monotonic):
    """The collector's Prometheus name of an OTLP metric; kind is the OTLP data
    field (sum, gauge, histogram, ...), monotonic its isMonotonic."""
    tokens = words(name)
    parts = (unit or "").split("/", 1)
    main = parts[0].strip()
    if main and "{" not in main and "}" not in main:
        word = "_".join(words(UNIT_WORDS.get(main, main)))
        if word and word not in tokens:
            tokens.append(word)
    if len(parts) > 1:
        per = parts[1].strip()
        if per and "{" not in per and "}" not in per:
            word = "_".join(words(PER_UNIT_WORDS.get(per, per)))
            if word and word not in tokens:
                tokens += ["per", word]
    if kind == "sum" and monotonic:
        tokens = [t for t in tokens if t != "total"] + ["total"]
    if unit == "1" and kind == "gauge":
        tokens = [t for t in tokens if t != "ratio"] + ["ratio"]
    out = "_".join(tokens)
    return "_" + out if out[:1].isdigit() else out


def prometheus_label(key):
    out = re.sub(r"[^0-9A-Za-z_]", "_", key)
    return "key_" + out if out[:1].isdigit() else out
