"""Runs in a pod of the smoke namespace; exits non-zero on the first failure.
Checks: Service names resolve and connect (ClusterIP via kube-proxy), headless StatefulSet pod names
resolve to the pods, and the API answers through the `kubernetes` Service with the pod's token."""

import json
import os
import socket
import ssl
import urllib.request

SA = "/var/run/secrets/kubernetes.io/serviceaccount"
NS = open(f"{SA}/namespace").read().strip()
D = "svc.cluster.local"


def get(url, **kw):
    return urllib.request.urlopen(url, timeout=10, **kw).read().decode().strip()


def resolve(name):
    ip = socket.gethostbyname(name)
    print(f"resolve {name} -> {ip}")
    return ip


echo_ip = resolve("echo")
assert resolve(f"echo.{NS}.{D}") == echo_ip and echo_ip.startswith("10.96."), echo_ip
print("GET http://echo/id ->", get("http://echo/id"))
print(f"GET http://echo.{NS}.{D}/id ->", get(f"http://echo.{NS}.{D}/id"))

for i in (0, 1):
    ip = resolve(f"web-{i}.web.{NS}.{D}")
    assert resolve(f"web-{i}.web") == ip and ip.startswith("10.244."), ip
    body = get(f"http://web-{i}.web.{NS}.{D}:8080/id")
    assert body == f"web-{i}", body
    print(f"GET http://web-{i}.web.{NS}.{D}:8080/id -> {body}")
assert sorted(a[4][0] for a in socket.getaddrinfo(f"web.{NS}.{D}", 80, proto=socket.IPPROTO_TCP)) == sorted(
    socket.gethostbyname(f"web-{i}.web") for i in (0, 1)
)
print(f"headless web.{NS}.{D} -> both StatefulSet pods")

token = open(f"{SA}/token").read()
ctx = ssl.create_default_context(cafile=f"{SA}/ca.crt")
host, port = os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"]
for base in ("https://kubernetes.default.svc", f"https://{host}:{port}"):
    req = urllib.request.Request(f"{base}/api", headers={"Authorization": f"Bearer {token}"})
    api = json.loads(urllib.request.urlopen(req, context=ctx, timeout=10).read())
    assert api["kind"] == "APIVersions", api
    print(f"GET {base}/api with the ServiceAccount token -> {api['kind']} {api['versions']}")
req = urllib.request.Request(
    f"https://kubernetes.default.svc/api/v1/namespaces/{NS}/secrets", headers={"Authorization": f"Bearer {token}"}
)
try:
    urllib.request.urlopen(req, context=ctx, timeout=10)
    raise SystemExit("the default ServiceAccount could list secrets")
except urllib.error.HTTPError as e:
    assert e.code == 403, e
    print("list secrets with the default ServiceAccount -> 403 (RBAC enforced)")
print("SMOKE CLIENT OK")
