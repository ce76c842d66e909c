"""Prints a BenchmarkRun's outcome from `kubectl get br NAME -o json` on stdin; exit 0 only
if it Succeeded (hack/demo.sh)."""
import json
import sys

status = json.load(sys.stdin).get("status") or {}
if status.get("phase") != "Succeeded":
    print(f"{status.get('phase')}: {status.get('reason')}: {status.get('message')}")
results = status.get("results") or {}
if results:
    print(f"tpmC {results['tpmC']}  efficiency {results['efficiency']}%  committed {results['committed']}  "
          f"aborts {results['aborts']}  errors {results['errors']}  unknown {results['unknown']}  "
          f"runner pods {results['runnerPods']}")
    for name, t in results["transactions"].items():
        lat = t["latencyMs"]
        print(f"  {name:<13}{t['executed']:>9}{t['mixPercent']:>7.1f}%  p50 {lat['p50']:.2f} ms  "
              f"p99 {lat['p99']:.2f} ms")
for f in status.get("faults") or []:
    print(f"fault {f['number']} {f['action']} {f.get('target', '')}: {f['state']}"
          + (f" after {f['recoverySeconds']} s" if "recoverySeconds" in f else ""))
durability = status.get("durability")
if durability:
    print(f"durability: {durability['acknowledged']} acknowledged NewOrders, {durability['found']} found, "
          f"{durability['lost']} lost, {durability['unknownOutcome']} of unknown outcome")
consistency = status.get("consistency")
if consistency:
    print("consistency: " + ("all 12 conditions hold" if consistency["passed"]
                             else f"violated {consistency['violated']}"))
sys.exit(0 if status.get("phase") == "Succeeded" else 1)
