"""slow-client.py - misbehaving clients for t1930-serve-limits.sh.

  slow-client.py MODE PORT [N]

Each mode prints a few lines that do not depend on the machine's speed
(times only as "within" bounds), so the test compares them exactly:

  loris N     N connections from 127.0.0.2, each sending a request line
              and then a header byte every 0.2 s: how many were closed at
              once (no answer, within 1 s), how many got a 408 with the
              JSON error (its message), and whether that came after 1 s
              and within 5 s
  body        full headers, 10 of the 100 body bytes, then nothing: the
              answer's status line and body, and whether it came after
              1 s and within 5 s
  full N      N idle connections from 127.0.0.3.., then a request on one
              more from 127.0.0.100: its status line, and whether it
              came once the N were cut (after 1 s, within 5 s)
  h2loris N   N connections from 127.0.0.2 sending 10 bytes of HTTP/2's
              preface, and one from 127.0.0.1 sending all of it: how
              many were closed at once, whether the whole one got the
              server's SETTINGS within 2 s, and whether the others were
              closed after 1 s and within 5 s
  h2garbage   an HTTP/1 request on the gRPC port: closed at once or not
  h2idle      preface and SETTINGS, then nothing: whether the server's
              SETTINGS came, then a GOAWAY, and the close within 5 s
  h2full N    N connections with the preface from 127.0.0.3..; one more
              from 127.0.0.100: closed at once; after the N leave, one
              from 127.0.0.101 gets SETTINGS within 3 s
"""
import socket
import sys
import threading
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
mode, port = sys.argv[1], int(sys.argv[2])
n = int(sys.argv[3]) if len(sys.argv) > 3 else 0


def conn(src):
    s = socket.create_connection(("127.0.0.1", port), timeout=10,
                                 source_address=(src, 0))
    return s


def read_all(s, limit):
    """Bytes until EOF, reset or limit seconds; and the seconds taken."""
    t0 = time.time()
    got = b""
    s.settimeout(0.1)
    while time.time() - t0 < limit:
        try:
            d = s.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            break
        if not d:
            break
        got += d
    return got, time.time() - t0


def closed_at_once(s):
    got, dt = read_all(s, 1.0)
    return not got and dt < 1.0


def frames(b):
    out = []
    while len(b) >= 9:
        ln = int.from_bytes(b[:3], "big")
        out.append(b[3])
        b = b[9 + ln:]
    return out


if mode == "loris":
    socks = [conn("127.0.0.2") for _ in range(n)]
    for s in socks:
        try:
            s.sendall(b"POST /v1/models/half:predict HTTP/1.1\r\n"
                      b"Host: x\r\n")
        except OSError:
            pass
    res = [None] * n
    t0 = time.time()

    def drip(i, s):
        got = b""
        s.settimeout(0.2)
        while time.time() - t0 < 6:
            try:
                d = s.recv(65536)
                if not d:
                    break
                got += d
                continue
            except socket.timeout:
                pass
            except OSError:
                break
            try:
                s.sendall(b"X")
            except OSError:
                break
        res[i] = (got, time.time() - t0)

    th = [threading.Thread(target=drip, args=(i, s))
          for i, s in enumerate(socks)]
    for x in th:
        x.start()
    for x in th:
        x.join()
    at_once = sum(1 for g, dt in res if not g and dt < 1.0)
    answered = [(g, dt) for g, dt in res if g]
    print("closed at once: %d" % at_once)
    print("answered: %d" % len(answered))
    for g in sorted(set(g.split(b"\r\n")[0] for g, _ in answered)):
        print(g.decode())
    for g in sorted(set(g.split(b"\r\n\r\n", 1)[-1] for g, _ in answered)):
        print(g.decode())
    print("after 1 s, within 5 s: %s" %
          all(1.0 <= dt < 5.0 for _, dt in answered))
elif mode == "body":
    s = conn("127.0.0.1")
    t0 = time.time()
    s.sendall(b"POST /v1/models/half:predict HTTP/1.1\r\nHost: x\r\n"
              b"Content-Length: 100\r\n\r\n{\"instanc")
    got, _ = read_all(s, 6)
    dt = time.time() - t0
    print(got.split(b"\r\n")[0].decode())
    print(got.split(b"\r\n\r\n", 1)[-1].decode())
    print("after 1 s, within 5 s: %s" % (1.0 <= dt < 5.0))
elif mode == "full":
    socks = [conn("127.0.0.%d" % (3 + i)) for i in range(n)]
    time.sleep(0.3)
    t0 = time.time()
    x = conn("127.0.0.100")
    x.sendall(b"GET /v1/models/half HTTP/1.1\r\nHost: x\r\n"
              b"Connection: close\r\n\r\n")
    got, _ = read_all(x, 6)
    dt = time.time() - t0
    print(got.split(b"\r\n")[0].decode())
    print("answered once the others are cut, after 1 s, within 5 s: %s" %
          (1.0 <= dt < 5.0))
elif mode == "h2loris":
    t0 = time.time()
    socks = [conn("127.0.0.2") for _ in range(n)]
    for s in socks:
        try:
            s.sendall(PREFACE[:10])
        except OSError:
            pass
    good = conn("127.0.0.1")
    good.sendall(PREFACE + SETTINGS)
    good.settimeout(2)
    try:
        ok = frames(good.recv(65536))[:1] == [4]
    except OSError:
        ok = False
    print("whole preface answered SETTINGS within 2 s: %s" %
          (ok and time.time() - t0 < 2))
    res = [None] * n

    def wait(i, s):
        got, _ = read_all(s, 6)
        res[i] = (got, time.time() - t0)

    th = [threading.Thread(target=wait, args=(i, s))
          for i, s in enumerate(socks)]
    for x in th:
        x.start()
    for x in th:
        x.join()
    at_once = [r for r in res if r[1] < 1.0]
    later = [r for r in res if r[1] >= 1.0]
    print("closed at once: %d" % len(at_once))
    print("closed after 1 s, within 5 s, unanswered: %d" %
          sum(1 for g, dt in later if not g and dt < 5.0))
elif mode == "h2garbage":
    s = conn("127.0.0.2")
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    print("closed at once: %s" % closed_at_once(s))
elif mode == "h2idle":
    s = conn("127.0.0.2")
    s.sendall(PREFACE + SETTINGS)
    got, dt = read_all(s, 6)
    types = frames(got)
    print("SETTINGS, then GOAWAY: %s" %
          (types[:1] == [4] and 7 in types))
    print("closed within 5 s: %s" % (dt < 5.0))
elif mode == "h2full":
    socks = [conn("127.0.0.%d" % (3 + i)) for i in range(n)]
    for s in socks:
        s.sendall(PREFACE + SETTINGS)
    time.sleep(0.3)
    x = conn("127.0.0.100")
    x.sendall(PREFACE + SETTINGS)
    print("one more closed at once: %s" % closed_at_once(x))
    for s in socks:
        s.close()
    t0 = time.time()
    ok = False
    while not ok and time.time() - t0 < 3:
        y = conn("127.0.0.101")
        y.sendall(PREFACE + SETTINGS)
        got, _ = read_all(y, 0.5)
        ok = frames(got)[:1] == [4]
        y.close()
    print("after they leave, a new one is served within 3 s: %s" % ok)
else:
    sys.exit("slow-client.py: unknown mode " + mode)
