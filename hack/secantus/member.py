"""A one-member MongoDB replica set for Kubernetes, served by SecantusDB (the test server the
runner's MongoDB tests use): the image local/secantus:dev runs it in place of mongod.

  member.py serve --port P --storage-path D --replica-set NAME --advertise HOST
  member.py ready --port P --replica-set NAME     # exit 0 iff `hello` says: primary of NAME

`serve` differs from `secantusd-py` in what a replica-set member must say about itself: the
set's name (secantusd-py always says "secantus") and, in `hello`'s hosts/primary/me, the name
clients reach it by (the pod's DNS name behind the headless Service) instead of the bound
address 0.0.0.0, which a driver in another pod would try to connect to. Every commit fsyncs
its journal (mongod's j:true for w:majority), so an acknowledged write survives a SIGKILL and a
crash-restart on the same volume.
"""

from __future__ import annotations

import argparse
import signal
import sys

import pymongo
from secantus.server import SecantusDBServer


class Member(SecantusDBServer):
    """SecantusDB that names itself `advertise` in `hello` (the listening socket stays 0.0.0.0)."""

    def __init__(self, advertise: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.advertise = advertise

    @property
    def address(self) -> tuple[str, int]:
        _, port = super().address
        return self.advertise, port


def serve(args: argparse.Namespace) -> int:
    member = Member(
        args.advertise,
        host=args.host,
        port=args.port,
        storage_path=args.storage_path,
        replica_set_name=args.replica_set,
        enable_test_commands=False,
        sync_on_commit=True,
        cache_size=args.cache_size,
    )

    def stop(signum, frame) -> None:  # a clean close checkpoints WiredTiger
        member.stop()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    member.start()
    print(f"member of {args.replica_set} as {args.advertise}:{args.port}, data {args.storage_path}", flush=True)
    member.wait()
    return 0


def ready(args: argparse.Namespace) -> int:
    """The chart's readiness contract: this member answers `hello` as the writable primary of
    the replica set named replicaSetName."""
    try:
        with pymongo.MongoClient(
            "127.0.0.1", args.port, directConnection=True, serverSelectionTimeoutMS=3000, connectTimeoutMS=3000
        ) as client:
            hello = client.admin.command("hello")
    except pymongo.errors.PyMongoError as e:
        print(f"not ready: {e}", file=sys.stderr)
        return 1
    if hello.get("setName") != args.replica_set or not hello.get("isWritablePrimary"):
        print(
            f"not ready: hello says setName={hello.get('setName')!r} "
            f"isWritablePrimary={hello.get('isWritablePrimary')!r}",
            file=sys.stderr,
        )
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="member.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--host", default="0.0.0.0")
    s.add_argument("--port", type=int, default=27017)
    s.add_argument("--storage-path", required=True)
    s.add_argument("--replica-set", required=True)
    s.add_argument("--advertise", required=True, help="host name clients reach this member by")
    s.add_argument("--cache-size", default="256M", help="WiredTiger cache, e.g. 256M")
    r = sub.add_parser("ready")
    r.add_argument("--port", type=int, default=27017)
    r.add_argument("--replica-set", required=True)
    args = p.parse_args(argv)
    return serve(args) if args.command == "serve" else ready(args)


if __name__ == "__main__":
    sys.exit(main())
