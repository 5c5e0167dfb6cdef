/*
 * accept.c - the door of tfk-serve's gRPC front end: it accepts the TCP
 * connections itself, so that it can count them, and hands each to
 * gRPC (grpc_server_add_channel_from_fd) once the client has sent
 * HTTP/2's 24-byte connection preface. gRPC's C core (1.51) has no
 * connection limit, and the channels made from a descriptor skip its
 * handshake deadline; this file gives both back:
 *
 *   --max_connections          connections held at most (waiting for
 *                              their preface, or gRPC's); more are
 *                              closed at once, unanswered
 *   --max_connections_per_ip   the same, per client address
 *   --header_timeout_in_ms     the preface must arrive within this
 *                              (else the connection is closed); bytes
 *                              that are not the preface close it at once
 *
 * A connection handed to gRPC is gRPC's: it closes the descriptor when
 * the connection ends (the client leaves, grpc.max_connection_idle_ms
 * passes, the server stops). So that a closed one stops counting, each
 * is remembered with its socket's inode, and is counted as gone when
 * its descriptor no longer names that socket (fstat), looked at once a
 * second and whenever a limit would refuse a connection. A descriptor
 * number accept gives back again is known to be gone at once.
 *
 * One thread: an epoll set of the listening socket, a wake pipe and the
 * connections still waiting for their preface, edge-triggered, since
 * the preface is read with MSG_PEEK (gRPC must read it itself) and a
 * partial one stays in the socket. Refusals and timeouts are logged
 * as counts, at most one line every 10 s.
 */
#include "model/servable.h"
#include "serve.h"
#include "util/alloc.h"
#include "util/cli.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
#define PREFACE_N 24

struct conn {
	int fd;
	ino_t ino;		/* handed to gRPC: its socket's inode */
	unsigned char addr[16];	/* the client's address */
	int addr_n;
	double deadline;	/* waiting: closed then */
};

struct sv_acceptor {
	struct sv_accept_opts o;
	void (*hand)(void *arg, int fd);
	void *arg;
	int lfd, ep, wake[2];
	pthread_t th;
	struct conn *wait, *live;	/* waiting for the preface; gRPC's */
	int n_wait, n_live;
	long refused, timed_out, bad;	/* since the last log line */
	double next_sweep, next_log;
};

static void addr_of(const struct sockaddr_storage *ss, struct conn *c)
{
	if (ss->ss_family == AF_INET6) {
		memcpy(c->addr, &((const struct sockaddr_in6 *)ss)->sin6_addr,
		       16);
		c->addr_n = 16;
	} else {
		memcpy(c->addr, &((const struct sockaddr_in *)ss)->sin_addr, 4);
		c->addr_n = 4;
	}
}

/* Forget the connections gRPC has closed. */
static void sweep(struct sv_acceptor *a)
{
	struct stat st;
	int i;

	for (i = a->n_live - 1; i >= 0; i--)
		if (fstat(a->live[i].fd, &st) || st.st_ino != a->live[i].ino)
			a->live[i] = a->live[--a->n_live];
}

static int held_by(const struct sv_acceptor *a, const struct conn *c)
{
	int i, n = 0;

	for (i = 0; i < a->n_wait; i++)
		n += a->wait[i].addr_n == c->addr_n &&
			!memcmp(a->wait[i].addr, c->addr, (size_t)c->addr_n);
	for (i = 0; i < a->n_live; i++)
		n += a->live[i].addr_n == c->addr_n &&
			!memcmp(a->live[i].addr, c->addr, (size_t)c->addr_n);
	return n;
}

static int over(const struct sv_acceptor *a, const struct conn *c)
{
	return a->n_wait + a->n_live >= a->o.max_conns ||
		held_by(a, c) >= a->o.max_per_ip;
}

static void drop_wait(struct sv_acceptor *a, int i)
{
	epoll_ctl(a->ep, EPOLL_CTL_DEL, a->wait[i].fd, NULL);
	a->wait[i] = a->wait[--a->n_wait];
}

static void take(struct sv_acceptor *a, double now)
{
	int k;

	for (k = 0; k < 64; k++) {
		struct sockaddr_storage ss;
		socklen_t n = sizeof(ss);
		struct epoll_event ev;
		struct conn c;
		int fd = accept4(a->lfd, (struct sockaddr *)&ss, &n,
				 SOCK_NONBLOCK | SOCK_CLOEXEC), one = 1, i;

		if (fd < 0) {
			/* out of descriptors: the listening socket stays
			 * readable, so wait a little rather than spin */
			if (errno == EMFILE || errno == ENFILE) {
				struct timespec ts = { 0, 100 * 1000 * 1000 };

				sweep(a);
				a->refused++;
				nanosleep(&ts, NULL);
			}
			return;
		}
		/* the number came back: gRPC closed the connection it was */
		for (i = 0; i < a->n_live; i++)
			if (a->live[i].fd == fd)
				a->live[i--] = a->live[--a->n_live];
		memset(&c, 0, sizeof(c));
		c.fd = fd;
		addr_of(&ss, &c);
		if (over(a, &c))
			sweep(a);
		if (over(a, &c)) {
			close(fd);
			a->refused++;
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c.deadline = now + a->o.preface_ms / 1000.0;
		memset(&ev, 0, sizeof(ev));
		ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
		ev.data.fd = fd;
		if (epoll_ctl(a->ep, EPOLL_CTL_ADD, fd, &ev)) {
			close(fd);
			continue;
		}
		a->wait[a->n_wait++] = c;
	}
}

/* Waiting connection i has news: hand it over, keep it, or close it. */
static void look(struct sv_acceptor *a, int i)
{
	char buf[PREFACE_N];
	struct conn c = a->wait[i];
	struct stat st;
	ssize_t r = recv(c.fd, buf, PREFACE_N, MSG_PEEK | MSG_DONTWAIT);

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r > 0 && !memcmp(buf, preface, (size_t)r) && r < PREFACE_N)
		return;
	drop_wait(a, i);
	if (r != PREFACE_N || memcmp(buf, preface, PREFACE_N) ||
	    fstat(c.fd, &st)) {
		a->bad += r > 0;
		close(c.fd);
		return;
	}
	c.ino = st.st_ino;
	a->live[a->n_live++] = c;
	a->hand(a->arg, c.fd);
}

static void log_counts(struct sv_acceptor *a, double now, int force)
{
	if ((!force && now < a->next_log) ||
	    !(a->refused + a->timed_out + a->bad))
		return;
	tfk_cli_warn("gRPC: connections closed: %ld over --max_connections "
		     "%ld or --max_connections_per_ip %ld, %ld without the "
		     "HTTP/2 preface within --header_timeout_in_ms %ld, %ld "
		     "not HTTP/2", a->refused, a->o.max_conns, a->o.max_per_ip,
		     a->timed_out, a->o.preface_ms, a->bad);
	a->refused = a->timed_out = a->bad = 0;
	a->next_log = now + 10;
}

static void *run(void *arg)
{
	struct sv_acceptor *a = arg;
	struct epoll_event ev[64];

	for (;;) {
		double now = tfk_sv_now(), wake = a->next_sweep;
		int i, n, ms;

		for (i = 0; i < a->n_wait; i++)
			if (a->wait[i].deadline < wake)
				wake = a->wait[i].deadline;
		ms = wake <= now ? 0 : (int)((wake - now) * 1000) + 1;
		n = epoll_wait(a->ep, ev, 64, ms);
		now = tfk_sv_now();
		for (i = 0; i < n; i++) {
			int fd = ev[i].data.fd, k;

			if (fd == a->wake[0]) {
				log_counts(a, now, 1);
				return NULL;
			}
			if (fd == a->lfd) {
				take(a, now);
				continue;
			}
			for (k = 0; k < a->n_wait; k++)
				if (a->wait[k].fd == fd) {
					look(a, k);
					break;
				}
		}
		for (i = a->n_wait - 1; i >= 0; i--)
			if (a->wait[i].deadline <= now) {
				int fd = a->wait[i].fd;

				drop_wait(a, i);
				close(fd);
				a->timed_out++;
			}
		if (now >= a->next_sweep) {
			sweep(a);
			a->next_sweep = now + 1;
		}
		log_counts(a, now, 0);
	}
}

int sv_listen(const char *host, long port, long *bound)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	socklen_t n;
	int one = 1, zero = 0, fd = -1, e;

	memset(&ss, 0, sizeof(ss));
	if (!strcmp(host, "0.0.0.0")) {
		fd = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK |
			    SOCK_CLOEXEC, 0);
		if (fd >= 0 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY,
					  &zero, sizeof(zero))) {
			close(fd);
			fd = -1;
		}
	}
	if (fd >= 0) {
		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_any;
		s6->sin6_port = htons((uint16_t)port);
		n = sizeof(*s6);
	} else {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, host, &s4->sin_addr) != 1) {
			errno = EINVAL;
			return -1;
		}
		n = sizeof(*s4);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK |
			    SOCK_CLOEXEC, 0);
	}
	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&ss, n) || listen(fd, 1024) ||
	    getsockname(fd, (struct sockaddr *)&ss, &n)) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	*bound = ntohs(ss.ss_family == AF_INET6 ? s6->sin6_port :
		       s4->sin_port);
	return fd;
}

struct sv_acceptor *sv_acceptor_start(const struct sv_accept_opts *o,
				      void (*hand)(void *arg, int fd),
				      void *arg, long *port)
{
	struct sv_acceptor *a = tfk_calloc(1, sizeof(*a));
	struct epoll_event ev;
	int e;

	if (!a)
		return NULL;
	a->o = *o;
	a->hand = hand;
	a->arg = arg;
	a->lfd = a->ep = a->wake[0] = a->wake[1] = -1;
	a->wait = tfk_calloc((size_t)o->max_conns + 1, sizeof(*a->wait));
	a->live = tfk_calloc((size_t)o->max_conns + 1, sizeof(*a->live));
	if (!a->wait || !a->live)
		goto fail;
	if ((a->lfd = sv_listen(o->host, o->port, port)) < 0)
		goto fail;
	if (pipe2(a->wake, O_CLOEXEC) ||
	    (a->ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
		goto fail;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.fd = a->lfd;
	if (epoll_ctl(a->ep, EPOLL_CTL_ADD, a->lfd, &ev))
		goto fail;
	ev.data.fd = a->wake[0];
	if (epoll_ctl(a->ep, EPOLL_CTL_ADD, a->wake[0], &ev))
		goto fail;
	a->next_sweep = tfk_sv_now() + 1;
	if (pthread_create(&a->th, NULL, run, a))
		goto fail;
	return a;
fail:
	e = errno;
	if (a->lfd >= 0)
		close(a->lfd);
	if (a->ep >= 0)
		close(a->ep);
	if (a->wake[0] >= 0) {
		close(a->wake[0]);
		close(a->wake[1]);
	}
	tfk_free(a->wait);
	tfk_free(a->live);
	tfk_free(a);
	errno = e;
	return NULL;
}

void sv_acceptor_stop(struct sv_acceptor *a)
{
	int i;

	if (write(a->wake[1], "", 1) != 1)
		tfk_cli_warn("gRPC: cannot wake the acceptor");
	pthread_join(a->th, NULL);
	for (i = 0; i < a->n_wait; i++)
		close(a->wait[i].fd);
	close(a->lfd);
	close(a->ep);
	close(a->wake[0]);
	close(a->wake[1]);
	tfk_free(a->wait);
	tfk_free(a->live);
	tfk_free(a);
}
