"""Test certificates made by openssl at test time, shared by the TLS tests
(server/tls_test.py for gRPC, http/https_test.py for HTTPS): a CA, and
leaf keys and certificates it signs, for a server (localhost, 127.0.0.1) or
a client. Files are written as NAME.key / NAME.crt in the given folder."""

import os
import subprocess


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_ca(d, name):
    """A self-signed CA `name` in folder `d`, valid for two days."""
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-subj", "/CN=" + name, "-keyout", name + ".key",
            "-out", name + ".crt", cwd=d)


def make_leaf(d, ca, name, server):
    """A key and a certificate for `name` signed by `ca`: for a server
    (subjectAltName localhost and 127.0.0.1) or a client."""
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=" + name,
            "-keyout", name + ".key", "-out", name + ".csr", cwd=d)
    ext = os.path.join(d, name + ".ext")
    with open(ext, "w") as f:
        if server:
            f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n"
                    "extendedKeyUsage=serverAuth\n")
        else:
            f.write("extendedKeyUsage=clientAuth\n")
    openssl("x509", "-req", "-in", name + ".csr", "-CA", ca + ".crt",
            "-CAkey", ca + ".key", "-CAcreateserial", "-days", "2",
            "-extfile", ext, "-out", name + ".crt", cwd=d)
