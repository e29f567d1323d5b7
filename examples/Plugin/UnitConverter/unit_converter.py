"""UnitConverter: a synchronous VCP plugin.

Reads one JSON object of string arguments on stdin and prints one JSON
object on stdout: {"status": "success", "result": ...} or
{"status": "error", "error": "..."}. Logs go to stderr, never stdout.
"""
import json
import os
import sys

# Factors to the kind's base unit (metre, kilogram, byte).
LINEAR = {
    "length": {"m": 1.0, "km": 1000.0, "cm": 0.01, "mm": 0.001,
               "mi": 1609.344, "yd": 0.9144, "ft": 0.3048, "in": 0.0254},
    "mass": {"kg": 1.0, "g": 0.001, "mg": 1e-6, "lb": 0.45359237, "oz": 0.028349523125},
    "data": {"B": 1.0, "KB": 1e3, "MB": 1e6, "GB": 1e9,
             "KiB": 1024.0, "MiB": 1024.0 ** 2, "GiB": 1024.0 ** 3},
}
TEMPERATURE = ("C", "F", "K")


def kind_of(unit):
    for kind, units in LINEAR.items():
        if unit in units:
            return kind
    return "temperature" if unit in TEMPERATURE else None


def to_kelvin(value, unit):
    return {"C": value + 273.15, "F": (value - 32) * 5 / 9 + 273.15, "K": value}[unit]


def from_kelvin(value, unit):
    return {"C": value - 273.15, "F": (value - 273.15) * 9 / 5 + 32, "K": value}[unit]


def convert(args, precision):
    try:
        value = float(args.get("value", ""))
    except ValueError:
        raise ValueError("value must be a number, got %r" % args.get("value"))
    src, dst = args.get("from", ""), args.get("to", "")
    kind, other = kind_of(src), kind_of(dst)
    if kind is None or other is None:
        raise ValueError("unknown unit %r; use ListUnits to see the units" % (src if kind is None else dst))
    if kind != other:
        raise ValueError("cannot convert %s (%s) to %s (%s)" % (src, kind, dst, other))
    if kind == "temperature":
        out = from_kelvin(to_kelvin(value, src), dst)
    else:
        out = value * LINEAR[kind][src] / LINEAR[kind][dst]
    text = "%s %s = %s %s" % (args["value"], src, format(out, ".%dg" % precision), dst)
    return {"content": [{"type": "text", "text": text}],
            "details": {"value": out, "from": src, "to": dst, "kind": kind}}


def list_units():
    lines = ["%s: %s" % (kind, ", ".join(units)) for kind, units in LINEAR.items()]
    lines.append("temperature: " + ", ".join(TEMPERATURE))
    return "\n".join(lines)


def main():
    raw = sys.stdin.read()
    args = json.loads(raw) if raw.strip() else {}
    precision = int(os.environ.get("UNIT_CONVERTER_PRECISION", "6"))
    command = args.get("command", "Convert")
    print("UnitConverter: command %s" % command, file=sys.stderr)
    if command == "Convert":
        return convert(args, precision)
    if command == "ListUnits":
        return list_units()
    raise ValueError("unknown command %r: use Convert or ListUnits" % command)


if __name__ == "__main__":
    try:
        out = {"status": "success", "result": main()}
    except Exception as exc:  # every failure is an answer, not a traceback
        out = {"status": "error", "error": str(exc)}
    sys.stdout.write(json.dumps(out, ensure_ascii=False))
    sys.stdout.flush()
