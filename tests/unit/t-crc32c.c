/*
 * t-crc32c.c - CRC-32C against RFC 3720 B.4 vectors, the check value,
 * TFRecord's masked values, and the three implementations against each
 * other on every length and alignment that matters to the fast paths.
 */
#include "io/crc32c.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

typedef uint32_t (*crc_fn)(uint32_t, const void *, size_t);

static void vectors(const char *name, crc_fn f)
{
	uint8_t b[48];
	/* RFC 3720 section B.4 "CRC Examples" */
	static const uint8_t iscsi[48] = {
		0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
		0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	int i;

	memset(b, 0, 32);
	is_int(f(0, b, 32), 0x8a9136aa, "%s: 32 bytes of zeros", name);
	memset(b, 0xff, 32);
	is_int(f(0, b, 32), 0x62a8ab43, "%s: 32 bytes of ones", name);
	for (i = 0; i < 32; i++)
		b[i] = (uint8_t)i;
	is_int(f(0, b, 32), 0x46dd794e, "%s: 32 incrementing bytes", name);
	for (i = 0; i < 32; i++)
		b[i] = (uint8_t)(31 - i);
	is_int(f(0, b, 32), 0x113fdb5c, "%s: 32 decrementing bytes", name);
	is_int(f(0, iscsi, 48), 0xd9963a56, "%s: iSCSI read command PDU", name);
	is_int(f(0, "123456789", 9), 0xe3069283, "%s: check value", name);
	is_int(f(0, "", 0), 0, "%s: empty input", name);
	is_int(f(f(0, "1234", 4), "56789", 5), 0xe3069283,
	       "%s: extend continues a crc", name);
}

int main(void)
{
	size_t n = 100000, len, off;
	uint8_t *buf = malloc(n + 64);
	int bad = 0;
	uint8_t len8[8] = { 0x13, 0, 0, 0, 0, 0, 0, 0 };

	vectors("ref", tfk_crc32c_ref);
	vectors("sw", tfk_crc32c_sw);
	vectors("hw", tfk_crc32c_hw);
	vectors("clmul", tfk_crc32c_clmul);
	tap_diag("dispatch uses %s", tfk_crc32c_impl());

	/* Fixture README: masked crc of the length 19 is 0x1b32910c. */
	is_int(tfk_crc32c_mask(tfk_crc32c(len8, 8)), 0x1b32910c,
	       "masked crc of a TFRecord length field");
	is_int(tfk_crc32c_unmask(tfk_crc32c_mask(0xdeadbeef)), 0xdeadbeef,
	       "unmask inverts mask");

	srand(7);
	for (size_t i = 0; i < n + 64; i++)
		buf[i] = (uint8_t)rand();
	/* Lengths around the 256 and 8192 three-way block sizes, at every
	 * alignment: where an interleaving bug would show. */
	for (off = 0; off < 8; off++) {
		static const size_t lens[] = { 0, 1, 7, 8, 9, 255, 767, 768, 769,
			8191, 24575, 24576, 24577, 24576 + 768 + 13, 49152, 100000 };
		for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
			uint32_t r;

			len = lens[k];
			r = tfk_crc32c_ref(0, buf + off, len);
			if (tfk_crc32c_sw(0, buf + off, len) != r ||
			    tfk_crc32c_hw(0, buf + off, len) != r ||
			    tfk_crc32c_clmul(0, buf + off, len) != r ||
			    tfk_crc32c(buf + off, len) != r)
				bad++;
		}
	}
	is_int(bad, 0, "sw and hw equal ref at all lengths and alignments");
	bad = 0;
	for (len = 0; len < 2000; len += 37)
		if (tfk_crc32c_hw(0x12345678, buf, len) !=
		    tfk_crc32c_ref(0x12345678, buf, len))
			bad++;
	is_int(bad, 0, "hw extend from a non-zero crc");
	/* The folding path: every length to 4096 (its 256-byte strides, the
	 * 64- and 16-byte tails, the crc32 remainder) at odd and even
	 * offsets, from a zero and a non-zero crc. */
	bad = 0;
	for (off = 0; off < 4; off++) {
		static const size_t offs[] = { 0, 1, 3, 13 };

		for (len = 0; len <= 4096; len++) {
			const uint8_t *q = buf + offs[off];
			uint32_t c0 = (uint32_t)(len * 2654435761u);

			if (tfk_crc32c_clmul(0, q, len) !=
			    tfk_crc32c_ref(0, q, len) ||
			    tfk_crc32c_clmul(c0, q, len) !=
			    tfk_crc32c_ref(c0, q, len) ||
			    tfk_crc32c(q, len) != tfk_crc32c_ref(0, q, len))
				bad++;
		}
	}
	is_int(bad, 0, "clmul equals ref on lengths 0..4096 at 4 offsets");
	bad = 0;
	for (len = 4096; len <= n; len = len * 3 + 7)
		for (off = 0; off < 3; off++)
			if (tfk_crc32c_clmul(~0u, buf + off, n - len) !=
			    tfk_crc32c_ref(~0u, buf + off, n - len))
				bad++;
	is_int(bad, 0, "clmul equals ref on long buffers");
	/* split anywhere, the halves extend to the whole */
	bad = 0;
	for (len = 0; len <= 3000; len += 61)
		if (tfk_crc32c_clmul(tfk_crc32c_clmul(0, buf + 1, len),
				     buf + 1 + len, 3001 - len) !=
		    tfk_crc32c_ref(0, buf + 1, 3001))
			bad++;
	is_int(bad, 0, "clmul extend across any split");
	free(buf);
	return tap_done();
}
