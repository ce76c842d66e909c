/* The pipelined YCSB run on VoltDB as one compiled loop (voltdb_compiled.py drives it, says when
 * it is used and why; pipelined.py is the reference it follows).
 *
 * Python spends 20-26 us of CPU on an operation of that loop (drawing it, encoding the call,
 * reading the answer, judging and measuring it), most of it in interpreter bookkeeping spread
 * over thirty functions; VoltDB itself spends about 31 us. Here the whole operation is C: the
 * client's draws (Python's Mersenne Twister, taken over from each client's random.Random, so the
 * same seed gives the same operations as workload.py: a test compares them), CoreWorkload's
 * generators (ported from generators.py, which ports YCSB's), the wire encoding of the call and
 * the reading of its answer (drivers/voltdb.py's encode_invocation and decode_response), the
 * latency histogram's counts and the Return statuses. Python gets, once a slice (some tens of
 * milliseconds), what the slice measured, the writes for the ledger and any failure to explain.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

/* -- Python's random.Random (Modules/_randommodule.c and Lib/random.py) ------------------ */

#define MT_N 624
#define MT_M 397

typedef struct {
    uint32_t state[MT_N];
    int index;
} MT;

static uint32_t mt_next(MT *mt) {
    static const uint32_t mag01[2] = {0x0U, 0x9908b0dfU};
    uint32_t y, *s = mt->state;
    if (mt->index >= MT_N) {
        int kk;
        for (kk = 0; kk < MT_N - MT_M; kk++) {
            y = (s[kk] & 0x80000000U) | (s[kk + 1] & 0x7fffffffU);
            s[kk] = s[kk + MT_M] ^ (y >> 1) ^ mag01[y & 0x1U];
        }
        for (; kk < MT_N - 1; kk++) {
            y = (s[kk] & 0x80000000U) | (s[kk + 1] & 0x7fffffffU);
            s[kk] = s[kk + (MT_M - MT_N)] ^ (y >> 1) ^ mag01[y & 0x1U];
        }
        y = (s[MT_N - 1] & 0x80000000U) | (s[0] & 0x7fffffffU);
        s[MT_N - 1] = s[MT_M - 1] ^ (y >> 1) ^ mag01[y & 0x1U];
        mt->index = 0;
    }
    y = s[mt->index++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= (y >> 18);
    return y;
}

static double mt_random(MT *mt) { /* random.random() */
    uint32_t a = mt_next(mt) >> 5, b = mt_next(mt) >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

static int64_t mt_bits63(MT *mt) { /* getrandbits(63): the low word first */
    uint32_t low = mt_next(mt), high = mt_next(mt) >> 1;
    return (int64_t)(((uint64_t)high << 32) | low);
}

/* randbytes(n) = getrandbits(8n).to_bytes(n, "little"), then workload.random_value's translation
 * to printable ASCII */
static void mt_printable(MT *mt, unsigned char *out, Py_ssize_t n) {
    Py_ssize_t pos = 0;
    for (int64_t k = (int64_t)n * 8; k > 0; k -= 32) {
        uint32_t r = mt_next(mt);
        if (k < 32) r >>= (32 - k);
        for (int j = 0; j < 4 && pos < n; j++) out[pos++] = (unsigned char)(32 + ((r >> (8 * j)) & 0xff) % 95);
    }
}

static int mt_from_state(MT *mt, PyObject *state) { /* random.Random.getstate()[1] */
    if (!PyTuple_Check(state) || PyTuple_GET_SIZE(state) != MT_N + 1) {
        PyErr_SetString(PyExc_ValueError, "a Mersenne Twister state is 625 integers");
        return -1;
    }
    for (int i = 0; i <= MT_N; i++) {
        unsigned long v = PyLong_AsUnsignedLong(PyTuple_GET_ITEM(state, i));
        if (v == (unsigned long)-1 && PyErr_Occurred()) return -1;
        if (i < MT_N) mt->state[i] = (uint32_t)v;
        else mt->index = (int)v;
    }
    return 0;
}

/* -- generators.py ------------------------------------------------------------------------- */

enum { G_CONSTANT, G_UNIFORM, G_ZIPFIAN, G_SCRAMBLED, G_LATEST, G_HOTSPOT, G_SEQUENTIAL, G_EXPONENTIAL };

typedef struct {
    int64_t items, base, countforzeta;
    double theta, zeta2theta, alpha, zetan, eta;
} Zipf;

typedef struct {
    int kind;
    int64_t lower, interval, cold_interval; /* uniform: lb, interval; hotspot: lower, hot, cold; sequential: start, interval; scrambled: min, itemcount; constant: value */
    int64_t counter;                         /* sequential's shared counter */
    double fraction;                         /* hotspot: hotopnfraction; exponential: gamma */
    Zipf zipf;
} Gen;

static double zipf_eta(const Zipf *z) {
    return (1 - pow(2.0 / (double)z->items, 1 - z->theta)) / (1 - z->zeta2theta / z->zetan);
}

static int64_t zipf_next(Zipf *z, MT *mt, int64_t itemcount) {
    if (itemcount > z->countforzeta) { /* zetastatic's incremental form */
        double total = z->zetan;
        for (int64_t i = z->countforzeta; i < itemcount; i++) total += 1 / pow((double)(i + 1), z->theta);
        z->zetan = total;
        z->countforzeta = itemcount;
        z->eta = zipf_eta(z);
    }
    double u = mt_random(mt), uz = u * z->zetan;
    if (uz < 1.0) return z->base;
    if (uz < 1.0 + pow(0.5, z->theta)) return z->base + 1;
    return z->base + (int64_t)((double)itemcount * pow(z->eta * u - z->eta + 1, z->alpha));
}

static int64_t fnvhash64(int64_t value) {
    uint64_t v = (uint64_t)value, h = 0xCBF29CE484222325ULL;
    for (int i = 0; i < 8; i++) {
        h = (h ^ (v & 0xff)) * 1099511628211ULL;
        v >>= 8;
    }
    int64_t s = (int64_t)h;
    return s == INT64_MIN ? s : (s < 0 ? -s : s);
}

static int64_t modulo(int64_t a, int64_t n) { /* Python's %: the sign of n */
    int64_t r = a % n;
    return (r != 0 && ((r < 0) != (n < 0))) ? r + n : r;
}

static int64_t java_int(double v) {
    if (isnan(v)) return 0;
    if (v >= 2147483647.0) return 2147483647;
    if (v <= -2147483648.0) return -2147483648LL;
    return (int64_t)v;
}

/* -- the loop's state ------------------------------------------------------------------------ */

enum { OP_READ, OP_UPDATE, OP_INSERT, OP_RMW, OP_KINDS };
/* measurement slots: each operation's name, then its -FAILED */
static const char *MEASUREMENT[OP_KINDS] = {"READ", "UPDATE", "INSERT", "READ-MODIFY-WRITE"};
static const char *KIND[OP_KINDS] = {"READ", "UPDATE", "INSERT", "READMODIFYWRITE"}; /* properties.OPERATIONS */
enum { S_OK, S_ERROR, S_NOT_FOUND, STATUSES };
static const char *STATUS[STATUSES] = {"OK", "ERROR", "NOT_FOUND"};
#define SLOTS (2 * OP_KINDS)
#define DENSE_US 65536 /* latencies below this many microseconds counted in an array; above, listed */
#define ACK_WINDOW (1 << 20)
#define MAX_KEY 64
#define MAX_FIELDS 64

typedef struct {
    int32_t *count;   /* [DENSE_US] */
    int32_t *touched; /* the indexes counted since the last report */
    Py_ssize_t touched_n;
    int64_t *far; /* microseconds >= DENSE_US, one each */
    Py_ssize_t far_n, far_cap;
} Latencies;

typedef struct {
    MT mt;
    int64_t limit, done; /* limit 0: none */
    int link;
    int in_flight, parked; /* parked: its link is down until the next slice */
    int kind, step;        /* the operation, and the call in flight (a READMODIFYWRITE: READ, then UPDATE) */
    int64_t keynum;        /* as counted (an insert acknowledges it) */
    char key[MAX_KEY];
    int key_len;
    int written_n;                      /* fields written, in field-name order */
    int written_field[MAX_FIELDS];      /* their indexes in fields */
    Py_ssize_t written_at[MAX_FIELDS];  /* where each value starts in values */
    Py_ssize_t written_len[MAX_FIELDS]; /* its length */
    unsigned char *values;              /* fieldcount * fieldlength bytes */
    int read_status;                    /* a READMODIFYWRITE's read */
    int64_t asked, read_answered, sent; /* nanoseconds */
} Client;

typedef struct {
    int fd; /* -1: down */
    unsigned char *out;
    Py_ssize_t out_n, out_cap;
    unsigned char *in;
    Py_ssize_t in_n, in_cap;
    int in_flight;
} Link;

typedef struct {
    PyObject_HEAD
    Client *clients;
    int nclients;
    Link *links;
    int nlinks;
    /* the workload */
    double op_share[OP_KINDS];
    int op_kind[OP_KINDS], nops;
    Gen key_chooser, field_length, field_chooser;
    int readallfields, writeallfields, ordered, zeropadding;
    int64_t recordcount, shard_index, shard_pods, fieldlength_max;
    int nfields;
    PyObject *field_names;    /* tuple of str */
    char **field_bytes;       /* UTF-8 of each */
    Py_ssize_t *field_blen;
    int *field_order;         /* indexes sorted by name: a fields table's row order */
    int64_t insert_next, insert_limit;
    unsigned char *ack_window;
    int64_t call_timeout_ns;
    /* what the slice measured */
    Latencies latency[SLOTS];
    int64_t statuses[OP_KINDS][STATUSES];
    PyObject *writes;   /* (known, kind "I"|"U", key, {field: value} | None) */
    PyObject *failures; /* (client, kind, counted keynum, writes, key, {field: value} | None, procedure, body | None, message) */
    PyObject *lost;     /* (link, message) */
    int stopping;
} Loop;

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* -- drawing an operation (workload.py's CoreWorkload.next_operation) ----------------------- */

static int64_t gen_next(Loop *L, Gen *g, MT *mt) {
    switch (g->kind) {
    case G_CONSTANT: return g->lower;
    case G_UNIFORM: return modulo(mt_bits63(mt), g->interval) + g->lower;
    case G_ZIPFIAN: return zipf_next(&g->zipf, mt, g->zipf.items);
    case G_SCRAMBLED: return g->lower + modulo(fnvhash64(zipf_next(&g->zipf, mt, g->zipf.items)), g->interval);
    case G_LATEST: return L->insert_limit - zipf_next(&g->zipf, mt, L->insert_limit);
    case G_HOTSPOT:
        if (mt_random(mt) < g->fraction) return g->lower + modulo(mt_bits63(mt), g->interval);
        return g->lower + g->interval + modulo(mt_bits63(mt), g->cold_interval);
    case G_SEQUENTIAL: return g->lower + modulo(g->counter++, g->interval);
    default: { /* G_EXPONENTIAL: -ln(u) / gamma */
        double u = mt_random(mt);
        return java_int(u == 0.0 ? INFINITY : -log(u) / g->fraction);
    }
    }
}

static int64_t next_keynum(Loop *L, MT *mt) { /* a key whose insert is acknowledged */
    for (;;) {
        int64_t keynum = L->key_chooser.kind == G_EXPONENTIAL ? L->insert_limit - gen_next(L, &L->key_chooser, mt)
                                                               : gen_next(L, &L->key_chooser, mt);
        if (L->key_chooser.kind == G_EXPONENTIAL ? keynum >= 0 : keynum <= L->insert_limit) return keynum;
    }
}

static void key_name(Loop *L, Client *c, int64_t counted) { /* insert_keynum, then build_key_name */
    int64_t keynum = counted < L->recordcount ? counted
                                              : L->recordcount + (counted - L->recordcount) * L->shard_pods + L->shard_index;
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%lld", (long long)(L->ordered ? keynum : fnvhash64(keynum)));
    int pad = L->zeropadding > n ? L->zeropadding - n : 0;
    if (4 + pad + n >= MAX_KEY) pad = MAX_KEY - 1 - 4 - n;
    memcpy(c->key, "user", 4);
    memset(c->key + 4, '0', pad);
    memcpy(c->key + 4 + pad, digits, n);
    c->key_len = 4 + pad + n;
    c->keynum = counted;
}

static void draw_value(Loop *L, Client *c, int field, Py_ssize_t at) {
    Py_ssize_t length = gen_next(L, &L->field_length, &c->mt);
    mt_printable(&c->mt, c->values + at, length);
    c->written_field[c->written_n] = field;
    c->written_at[c->written_n] = at;
    c->written_len[c->written_n++] = length;
}

static void draw_written(Loop *L, Client *c, int all) {
    c->written_n = 0;
    if (all) {
        for (int f = 0; f < L->nfields; f++) draw_value(L, c, f, (Py_ssize_t)f * (L->fieldlength_max + 1));
    } else {
        draw_value(L, c, (int)gen_next(L, &L->field_chooser, &c->mt), 0);
    }
}

static void draw_read_fields(Loop *L, Client *c) { /* drawn as workload.py does; a VoltDB read returns them all */
    if (!L->readallfields) gen_next(L, &L->field_chooser, &c->mt);
}

static void draw_operation(Loop *L, Client *c) {
    double val = mt_random(&c->mt);
    int kind = L->op_kind[L->nops - 1];
    for (int i = 0; i < L->nops; i++) {
        if (val < L->op_share[i]) {
            kind = L->op_kind[i];
            break;
        }
        val -= L->op_share[i];
    }
    c->kind = kind;
    if (kind == OP_INSERT) {
        key_name(L, c, L->insert_next++);
        draw_written(L, c, 1);
        return;
    }
    key_name(L, c, next_keynum(L, &c->mt));
    if (kind == OP_READ) {
        draw_read_fields(L, c);
        c->written_n = 0;
    } else if (kind == OP_UPDATE) {
        draw_written(L, c, L->writeallfields);
    } else {
        draw_read_fields(L, c);
        draw_written(L, c, L->writeallfields);
    }
}

static int acknowledge_insert(Loop *L, int64_t value) { /* AcknowledgedCounterGenerator.acknowledge */
    int64_t slot = value & (ACK_WINDOW - 1);
    if (L->ack_window[slot]) {
        PyErr_SetString(PyExc_RuntimeError, "Too many unacknowledged insertion keys.");
        return -1;
    }
    L->ack_window[slot] = 1;
    int64_t before_first = L->insert_limit & (ACK_WINDOW - 1), index = L->insert_limit + 1;
    while (index != before_first) { /* YCSB's loop, its comparison of an index with a slot included */
        slot = index & (ACK_WINDOW - 1);
        if (!L->ack_window[slot]) break;
        L->ack_window[slot] = 0;
        index++;
    }
    L->insert_limit = index - 1;
    return 0;
}

/* -- the wire (drivers/voltdb.py) --------------------------------------------------------- */

#define T_STRING 9
#define T_VARBINARY 25
#define T_VOLTTABLE 21
#define SUCCESS 1

static int reserve(unsigned char **buf, Py_ssize_t *cap, Py_ssize_t need) {
    if (need <= *cap) return 0;
    Py_ssize_t cap2 = *cap ? *cap : 4096;
    while (cap2 < need) cap2 *= 2;
    unsigned char *b = PyMem_Realloc(*buf, cap2);
    if (!b) {
        PyErr_NoMemory();
        return -1;
    }
    *buf = b;
    *cap = cap2;
    return 0;
}

static unsigned char *put32(unsigned char *p, uint32_t v) {
    p[0] = v >> 24, p[1] = v >> 16, p[2] = v >> 8, p[3] = v;
    return p + 4;
}

static unsigned char *put_string(unsigned char *p, const char *s, Py_ssize_t n) {
    p = put32(p, (uint32_t)n);
    memcpy(p, s, n);
    return p + n;
}

static uint32_t get32(const unsigned char *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static const char *procedure_of(int step) {
    return step == OP_READ ? "YcsbRead" : step == OP_UPDATE ? "YcsbUpdate" : "YcsbInsert";
}

/* encode_invocation(procedure, [(STRING, key)] + [the fields table, in field-name order]) */
static int encode_call(Loop *L, Link *link, Client *c, int handle) {
    const char *procedure = procedure_of(c->step);
    Py_ssize_t plen = (Py_ssize_t)strlen(procedure), rows_len = 0;
    int with_table = c->step != OP_READ;
    for (int i = 0; i < c->written_n; i++)
        rows_len += 4 + 4 + L->field_blen[c->written_field[i]] + 4 + c->written_len[i];
    static const char *COLUMNS[2] = {"field", "field_value"};
    Py_ssize_t header_len = 1 + 2 + 2 + (4 + 5) + (4 + 11);
    Py_ssize_t table_len = 4 + header_len + 4 + rows_len; /* after its own length */
    Py_ssize_t body = 1 + 4 + plen + 8 + 2 + (1 + 4 + c->key_len) + (with_table ? 1 + 4 + table_len : 0);
    if (reserve(&link->out, &link->out_cap, link->out_n + 4 + body) < 0) return -1;
    unsigned char *p = link->out + link->out_n;
    p = put32(p, (uint32_t)body);
    *p++ = 0;
    p = put_string(p, procedure, plen);
    uint64_t h = (uint64_t)handle;
    for (int i = 7; i >= 0; i--) *p++ = (unsigned char)(h >> (8 * i));
    *p++ = 0, *p++ = with_table ? 2 : 1;
    *p++ = T_STRING;
    p = put_string(p, c->key, c->key_len);
    if (with_table) {
        *p++ = T_VOLTTABLE;
        p = put32(p, (uint32_t)table_len);
        p = put32(p, (uint32_t)header_len);
        *p++ = 0, *p++ = 0, *p++ = 2, *p++ = T_STRING, *p++ = T_VARBINARY;
        p = put_string(p, COLUMNS[0], 5);
        p = put_string(p, COLUMNS[1], 11);
        p = put32(p, (uint32_t)c->written_n);
        for (int r = 0; r < L->nfields && c->written_n; r++) { /* the rows sorted by field name */
            int field = L->field_order[r];
            for (int i = 0; i < c->written_n; i++) {
                if (c->written_field[i] != field) continue;
                p = put32(p, (uint32_t)(4 + L->field_blen[field] + 4 + c->written_len[i]));
                p = put_string(p, L->field_bytes[field], L->field_blen[field]);
                p = put_string(p, (const char *)c->values + c->written_at[i], c->written_len[i]);
            }
        }
    }
    link->out_n = p - link->out;
    return 0;
}

typedef struct {
    int status;
    int64_t rows;      /* the first table's */
    int64_t first;     /* its first row's first value (an update's count), if an integer */
    int has_first;
} Answer;

/* decode_response, as far as the loop reads it: -1 if the message is not one */
static int read_answer(const unsigned char *b, Py_ssize_t n, Answer *a) {
    if (n < 11) return -1;
    unsigned char present = b[9];
    a->status = (signed char)b[10];
    a->rows = 0, a->has_first = 0;
    Py_ssize_t off = 11;
#define SKIP_STRING()                                                                                           \
    do {                                                                                                        \
        if (off + 4 > n) return -1;                                                                             \
        int32_t len_ = (int32_t)get32(b + off);                                                                 \
        off += 4 + (len_ > 0 ? len_ : 0);                                                                       \
    } while (0)
    if (present & 0x20) SKIP_STRING();
    off += 1; /* application status */
    if (present & 0x80) SKIP_STRING();
    off += 4; /* round trip time */
    if (present & 0x40) SKIP_STRING();
#undef SKIP_STRING
    if (a->status != SUCCESS) return 0;
    if (off + 2 > n) return -1;
    int tables = (b[off] << 8) | b[off + 1];
    off += 2;
    if (tables == 0) return 0;
    if (off + 8 > n) return -1;
    Py_ssize_t header = (int32_t)get32(b + off + 4), columns_end = off + 8 + header;
    if (header < 3 || columns_end + 4 > n) return -1;
    int type = b[off + 8 + 3];
    a->rows = (int32_t)get32(b + columns_end);
    Py_ssize_t row = columns_end + 4 + 4; /* past the first row's length */
    if (a->rows > 0) {
        if (type == 6 && row + 8 <= n) { /* BIGINT */
            int64_t v = 0;
            for (int i = 0; i < 8; i++) v = (v << 8) | b[row + i];
            a->first = v, a->has_first = 1;
        } else if (type == 5 && row + 4 <= n) { /* INTEGER */
            a->first = (int32_t)get32(b + row), a->has_first = 1;
        } else if (type == 3 && row + 1 <= n) { /* TINYINT */
            a->first = (signed char)b[row], a->has_first = 1;
        }
    }
    return 0;
}

/* -- measuring ----------------------------------------------------------------------------- */

static int measure(Loop *L, int kind, int status, int64_t ns, int report_status) {
    int64_t us = ns / 1000;
    if (us < 1) us = 1;
    if (us > 3600LL * 1000000) us = 3600LL * 1000000; /* results.py's histogram range */
    Latencies *lat = &L->latency[kind + (status == S_OK ? 0 : OP_KINDS)];
    if (us < DENSE_US) {
        if (lat->count[us]++ == 0) lat->touched[lat->touched_n++] = (int32_t)us;
    } else {
        if (lat->far_n == lat->far_cap) {
            Py_ssize_t cap = lat->far_cap ? 2 * lat->far_cap : 64;
            int64_t *far = PyMem_Realloc(lat->far, cap * sizeof(int64_t));
            if (!far) {
                PyErr_NoMemory();
                return -1;
            }
            lat->far = far, lat->far_cap = cap;
        }
        lat->far[lat->far_n++] = us;
    }
    if (report_status) L->statuses[kind][status]++;
    return 0;
}

static PyObject *written_dict(Loop *L, Client *c) {
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    for (int i = 0; i < c->written_n; i++) {
        PyObject *v = PyBytes_FromStringAndSize((const char *)c->values + c->written_at[i], c->written_len[i]);
        if (!v || PyDict_SetItem(d, PyTuple_GET_ITEM(L->field_names, c->written_field[i]), v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(v);
    }
    return d;
}

/* outcome.written for a known status: an acknowledged insert or update */
static int ledger(Loop *L, Client *c) {
    int insert = c->kind == OP_INSERT;
    PyObject *values = insert ? Py_NewRef(Py_None) : written_dict(L, c);
    if (!values) return -1;
    PyObject *entry = Py_BuildValue("(OsNN)", Py_True, insert ? "I" : "U",
                                    PyUnicode_FromStringAndSize(c->key, c->key_len), values);
    if (!entry) return -1;
    int rc = PyList_Append(L->writes, entry);
    Py_DECREF(entry);
    return rc;
}

/* -- the operations ------------------------------------------------------------------------ */

static int finish(Loop *L, int n) { /* the operation is over: its client counts it and may ask again */
    Client *c = &L->clients[n];
    if (c->kind == OP_INSERT && acknowledge_insert(L, c->keynum) < 0) return -1;
    c->done++;
    return 0;
}

/* A step that failed (an error status, a lost connection, its time up): YCSB's Return=ERROR. Python
 * makes the error (its driver's message and class), counts it and writes the ledger's unknown
 * outcome if the error is one (failure list). */
static int failed(Loop *L, int n, PyObject *body, const char *message, int64_t now) {
    Client *c = &L->clients[n];
    PyObject *values = c->written_n ? written_dict(L, c) : Py_NewRef(Py_None);
    if (!values) return -1;
    PyObject *entry = Py_BuildValue(
        "(isLiNNsOs)", n, KIND[c->kind], (long long)c->keynum, c->step != OP_READ, PyUnicode_FromStringAndSize(c->key, c->key_len),
        values, procedure_of(c->step), body ? body : Py_None, message ? message : "");
    if (!entry) return -1;
    int rc = PyList_Append(L->failures, entry);
    Py_DECREF(entry);
    if (rc < 0 || measure(L, c->kind, S_ERROR, now - c->asked, 1) < 0) return -1;
    return finish(L, n);
}

static int can_ask(Loop *L, Client *c) {
    return !L->stopping && !c->parked && !c->in_flight && (c->limit == 0 || c->done < c->limit);
}

static int send_step(Loop *L, int n, int64_t now) {
    Client *c = &L->clients[n];
    Link *link = &L->links[c->link];
    if (link->fd < 0) { /* pipelined.py's flush: no endpoint reachable */
        c->parked = 1;
        return failed(L, n, NULL, "no VoltDB endpoint reachable", now); /* drivers/voltdb.py UNREACHABLE */
    }
    if (encode_call(L, link, c, n) < 0) return -1;
    c->sent = 0; /* its time runs from the flush that sends it */
    c->in_flight = 1;
    link->in_flight++;
    return 0;
}

static int ask(Loop *L, int n) {
    Client *c = &L->clients[n];
    if (!can_ask(L, c)) return 0;
    draw_operation(L, c);
    c->asked = now_ns();
    c->step = c->kind == OP_RMW ? OP_READ : c->kind;
    return send_step(L, n, c->asked);
}

static int answered(Loop *L, int n, const unsigned char *body, Py_ssize_t len) {
    Client *c = &L->clients[n];
    Link *link = &L->links[c->link];
    int64_t now = now_ns();
    Answer a;
    c->in_flight = 0;
    link->in_flight--;
    if (read_answer(body, len, &a) < 0) {
        PyErr_Format(PyExc_ValueError, "a VoltDB answer of %zd bytes that is not one", len);
        return -1;
    }
    if (a.status != SUCCESS) {
        PyObject *raw = PyBytes_FromStringAndSize((const char *)body, len);
        if (!raw) return -1;
        int rc = failed(L, n, raw, NULL, now);
        Py_DECREF(raw);
        return rc;
    }
    int status;
    if (c->step == OP_READ) {
        status = a.rows > 0 ? S_OK : S_NOT_FOUND;
        if (c->kind == OP_RMW) { /* its update next */
            c->read_status = status;
            c->read_answered = now;
            c->step = OP_UPDATE;
            return send_step(L, n, now);
        }
    } else if (c->step == OP_UPDATE) {
        status = a.has_first && a.first == 1 ? S_OK : S_NOT_FOUND;
    } else {
        status = S_OK;
    }
    if (c->kind == OP_RMW) { /* outcome.judge: the read and the update measured each, and the whole */
        int whole = c->read_status == S_OK ? status : c->read_status;
        if (measure(L, OP_READ, c->read_status, c->read_answered - c->asked, 1) < 0 ||
            measure(L, OP_UPDATE, status, now - c->read_answered, 1) < 0 ||
            measure(L, OP_RMW, whole, now - c->asked, 0) < 0)
            return -1;
        status = whole;
    } else if (measure(L, c->kind, status, now - c->asked, 1) < 0) {
        return -1;
    }
    if (status == S_OK && c->kind != OP_READ && ledger(L, c) < 0) return -1;
    return finish(L, n);
}

/* fail every call in flight on a link (pipelined.py's fail_all) and report the link lost */
static int lose_link(Loop *L, int l, const char *message) {
    Link *link = &L->links[l];
    int64_t now = now_ns();
    for (int n = 0; n < L->nclients; n++) {
        Client *c = &L->clients[n];
        if (c->link != l || !c->in_flight) continue;
        c->in_flight = 0;
        c->parked = 1; /* asks again once Python has reconnected */
        if (failed(L, n, NULL, message, now) < 0) return -1;
    }
    link->in_flight = 0, link->out_n = 0, link->in_n = 0, link->fd = -1;
    PyObject *entry = Py_BuildValue("(is)", l, message);
    if (!entry) return -1;
    int rc = PyList_Append(L->lost, entry);
    Py_DECREF(entry);
    return rc;
}

static int flush(Loop *L, int l) {
    Link *link = &L->links[l];
    Py_ssize_t at = 0;
    int64_t deadline = now_ns() + L->call_timeout_ns;
    while (at < link->out_n) {
        ssize_t sent;
        Py_BEGIN_ALLOW_THREADS
        sent = send(link->fd, link->out + at, link->out_n - at, MSG_DONTWAIT | MSG_NOSIGNAL);
        Py_END_ALLOW_THREADS
        if (sent > 0) {
            at += sent;
            continue;
        }
        if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            struct pollfd pfd = {link->fd, POLLOUT, 0};
            int64_t left = deadline - now_ns();
            if (left <= 0) return lose_link(L, l, "no answer within call_timeout (send)");
            struct timespec ts = {left / 1000000000LL, left % 1000000000LL};
            Py_BEGIN_ALLOW_THREADS
            ppoll(&pfd, 1, &ts, NULL);
            Py_END_ALLOW_THREADS
            continue;
        }
        char message[160];
        snprintf(message, sizeof message, "%s", strerror(errno));
        return lose_link(L, l, message);
    }
    link->out_n = 0;
    for (int n = 0; n < L->nclients; n++) /* each call's time runs from when it was sent */
        if (L->clients[n].link == l && L->clients[n].in_flight && !L->clients[n].sent) L->clients[n].sent = now_ns();
    return 0;
}

static int receive(Loop *L, int l) {
    Link *link = &L->links[l];
    if (reserve(&link->in, &link->in_cap, link->in_n + 65536) < 0) return -1;
    ssize_t got;
    Py_BEGIN_ALLOW_THREADS
    got = recv(link->fd, link->in + link->in_n, link->in_cap - link->in_n, MSG_DONTWAIT);
    Py_END_ALLOW_THREADS
    if (got == 0) return lose_link(L, l, "connection closed by the server");
    if (got < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return 0;
        char message[160];
        snprintf(message, sizeof message, "%s", strerror(errno));
        return lose_link(L, l, message);
    }
    link->in_n += got;
    Py_ssize_t at = 0;
    while (link->in_n - at >= 4) {
        Py_ssize_t len = (int32_t)get32(link->in + at);
        if (len < 11) return lose_link(L, l, "a malformed answer");
        if (link->in_n - at - 4 < len) break;
        const unsigned char *body = link->in + at + 4;
        int64_t handle = 0;
        for (int i = 1; i <= 8; i++) handle = (handle << 8) | body[i];
        at += 4 + len;
        if (handle < 0 || handle >= L->nclients || !L->clients[handle].in_flight || L->clients[handle].link != l)
            return lose_link(L, l, "an answer to no call in flight");
        if (answered(L, (int)handle, body, len) < 0) return -1;
    }
    memmove(link->in, link->in + at, link->in_n - at);
    link->in_n -= at;
    return 0;
}

/* -- the slice ----------------------------------------------------------------------------- */

static PyObject *take_report(Loop *L, int finished) {
    PyObject *done = PyList_New(L->nclients), *statuses = PyList_New(0), *latencies = PyList_New(0);
    if (!done || !statuses || !latencies) goto error;
    for (int n = 0; n < L->nclients; n++) PyList_SET_ITEM(done, n, PyLong_FromLongLong(L->clients[n].done));
    for (int k = 0; k < OP_KINDS; k++)
        for (int s = 0; s < STATUSES; s++)
            if (L->statuses[k][s]) {
                PyObject *e = Py_BuildValue("(ssL)", MEASUREMENT[k], STATUS[s], (long long)L->statuses[k][s]);
                if (!e || PyList_Append(statuses, e) < 0) {
                    Py_XDECREF(e);
                    goto error;
                }
                Py_DECREF(e);
                L->statuses[k][s] = 0;
            }
    for (int slot = 0; slot < SLOTS; slot++) {
        Latencies *lat = &L->latency[slot];
        if (!lat->touched_n && !lat->far_n) continue;
        PyObject *pairs = PyList_New(0), *e = NULL;
        if (!pairs) goto error;
        for (Py_ssize_t i = 0; i < lat->touched_n; i++) {
            int32_t us = lat->touched[i];
            PyObject *pair = Py_BuildValue("(ii)", us, lat->count[us]);
            lat->count[us] = 0;
            if (!pair || PyList_Append(pairs, pair) < 0) {
                Py_XDECREF(pair);
                Py_DECREF(pairs);
                goto error;
            }
            Py_DECREF(pair);
        }
        for (Py_ssize_t i = 0; i < lat->far_n; i++) {
            PyObject *pair = Py_BuildValue("(Li)", (long long)lat->far[i], 1);
            if (!pair || PyList_Append(pairs, pair) < 0) {
                Py_XDECREF(pair);
                Py_DECREF(pairs);
                goto error;
            }
            Py_DECREF(pair);
        }
        lat->touched_n = 0, lat->far_n = 0;
        const char *name = MEASUREMENT[slot % OP_KINDS];
        e = Py_BuildValue("(NN)", slot < OP_KINDS ? PyUnicode_FromString(name) : PyUnicode_FromFormat("%s-FAILED", name),
                          pairs);
        if (!e || PyList_Append(latencies, e) < 0) {
            Py_XDECREF(e);
            goto error;
        }
        Py_DECREF(e);
    }
    PyObject *report = Py_BuildValue("{s:O,s:N,s:N,s:N,s:N,s:N,s:N}", "finished", finished ? Py_True : Py_False,
                                     "done", done, "statuses", statuses, "latencies", latencies, "writes", L->writes,
                                     "failures", L->failures, "lost", L->lost);
    L->writes = PyList_New(0), L->failures = PyList_New(0), L->lost = PyList_New(0);
    if (!L->writes || !L->failures || !L->lost) {
        Py_XDECREF(report);
        return NULL;
    }
    return report;
error:
    Py_XDECREF(done);
    Py_XDECREF(statuses);
    Py_XDECREF(latencies);
    return NULL;
}

/* run(seconds, stopping): operations for up to `seconds`, or until every client is done or a link
 * is lost (Python reconnects it); with stopping, nothing more is asked and what is in flight is
 * answered (pipelined.py). The slice's report. */
static PyObject *Loop_run(Loop *L, PyObject *args) {
    double seconds;
    int stopping;
    if (!PyArg_ParseTuple(args, "dp", &seconds, &stopping)) return NULL;
    L->stopping = stopping;
    int64_t end = now_ns() + (int64_t)(seconds * 1e9);
    for (int n = 0; n < L->nclients; n++) L->clients[n].parked = 0;
    for (int n = 0; n < L->nclients; n++)
        if (ask(L, n) < 0) return NULL;
    for (;;) {
        for (int l = 0; l < L->nlinks; l++)
            if (L->links[l].fd >= 0 && L->links[l].out_n && flush(L, l) < 0) return NULL;
        if (PyList_GET_SIZE(L->lost)) return take_report(L, 0); /* Python reconnects it */
        struct pollfd pfd[64];
        int which[64], np = 0;
        for (int l = 0; l < L->nlinks; l++)
            if (L->links[l].fd >= 0 && L->links[l].in_flight) {
                pfd[np].fd = L->links[l].fd, pfd[np].events = POLLIN, pfd[np].revents = 0;
                which[np++] = l;
            }
        if (np == 0) {
            int can = 0, parked = 0;
            for (int n = 0; n < L->nclients; n++) {
                can |= can_ask(L, &L->clients[n]);
                parked |= L->clients[n].parked && !L->stopping;
            }
            if (!can) return take_report(L, !parked);
            for (int n = 0; n < L->nclients; n++)
                if (ask(L, n) < 0) return NULL;
            continue;
        }
        int64_t now = now_ns(), wait = end - now, oldest = INT64_MAX;
        if (wait <= 0) return take_report(L, 0); /* what is in flight is answered in the next slice */
        for (int n = 0; n < L->nclients; n++)
            if (L->clients[n].in_flight && L->clients[n].sent && L->clients[n].sent < oldest) oldest = L->clients[n].sent;
        if (oldest != INT64_MAX && oldest + L->call_timeout_ns - now < wait) wait = oldest + L->call_timeout_ns - now;
        if (wait < 0) wait = 0;
        struct timespec ts = {wait / 1000000000LL, wait % 1000000000LL};
        int ready;
        Py_BEGIN_ALLOW_THREADS
        ready = ppoll(pfd, np, &ts, NULL);
        Py_END_ALLOW_THREADS
        if (ready < 0 && errno != EINTR) return PyErr_SetFromErrno(PyExc_OSError);
        for (int i = 0; i < np && ready > 0; i++)
            if (pfd[i].revents && L->links[which[i]].fd >= 0 && receive(L, which[i]) < 0) return NULL;
        now = now_ns();
        for (int l = 0; l < L->nlinks; l++) { /* a call sent on a link out of time: fail them all */
            if (L->links[l].fd < 0 || !L->links[l].in_flight) continue;
            for (int n = 0; n < L->nclients; n++) {
                Client *c = &L->clients[n];
                if (c->link == l && c->in_flight && c->sent && now >= c->sent + L->call_timeout_ns) {
                    char message[96];
                    snprintf(message, sizeof message, "no answer within call_timeout %g s", L->call_timeout_ns / 1e9);
                    if (lose_link(L, l, message) < 0) return NULL;
                    break;
                }
            }
        }
        for (int n = 0; n < L->nclients; n++)
            if (ask(L, n) < 0) return NULL;
    }
}

/* set_link(i, fd): link i's connection (-1: none); a new one once the loop has reported the old one lost */
static PyObject *Loop_set_link(Loop *L, PyObject *args) {
    int l, fd;
    if (!PyArg_ParseTuple(args, "ii", &l, &fd)) return NULL;
    if (l < 0 || l >= L->nlinks) return PyErr_Format(PyExc_IndexError, "no link %d", l);
    Link *link = &L->links[l];
    if (link->in_flight && fd != link->fd)
        return PyErr_Format(PyExc_RuntimeError, "link %d has calls in flight on its connection", l);
    if (fd != link->fd) link->fd = fd, link->out_n = 0, link->in_n = 0;
    Py_RETURN_NONE;
}

/* draw(client, count): the client's next operations as (kind, counted keynum, key, {field: value} | None),
 * without running them (each insert acknowledged at once): what a test compares with workload.py */
static PyObject *Loop_draw(Loop *L, PyObject *args) {
    int n, count;
    if (!PyArg_ParseTuple(args, "ii", &n, &count)) return NULL;
    if (n < 0 || n >= L->nclients) return PyErr_Format(PyExc_IndexError, "no client %d", n);
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    for (int i = 0; i < count; i++) {
        Client *c = &L->clients[n];
        draw_operation(L, c);
        PyObject *values = c->written_n ? written_dict(L, c) : Py_NewRef(Py_None);
        PyObject *e = values ? Py_BuildValue("(sLNN)", KIND[c->kind], (long long)c->keynum,
                                             PyUnicode_FromStringAndSize(c->key, c->key_len), values)
                             : NULL;
        if (!e || PyList_Append(out, e) < 0 || (c->kind == OP_INSERT && acknowledge_insert(L, c->keynum) < 0)) {
            Py_XDECREF(e);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(e);
    }
    return out;
}

/* encode(client, handle): the call of the client's operation last drawn (its first step), as sent */
static PyObject *Loop_encode(Loop *L, PyObject *args) {
    int n, handle;
    if (!PyArg_ParseTuple(args, "ii", &n, &handle)) return NULL;
    if (n < 0 || n >= L->nclients) return PyErr_Format(PyExc_IndexError, "no client %d", n);
    Client *c = &L->clients[n];
    Link scratch = {0};
    c->step = c->kind == OP_RMW ? OP_READ : c->kind;
    if (encode_call(L, &scratch, c, handle) < 0) return NULL;
    PyObject *out = PyBytes_FromStringAndSize((const char *)scratch.out, scratch.out_n);
    PyMem_Free(scratch.out);
    return out;
}

/* -- construction -------------------------------------------------------------------------- */

static int parse_gen(PyObject *spec, Gen *g) {
    /* (kind, lower, interval, cold_interval, counter, fraction, (items, base, countforzeta, theta, zeta2theta, alpha, zetan, eta)) */
    Zipf *z = &g->zipf;
    if (!PyArg_ParseTuple(spec, "iLLLLd(LLLddddd)", &g->kind, &g->lower, &g->interval, &g->cold_interval, &g->counter,
                          &g->fraction, &z->items, &z->base, &z->countforzeta, &z->theta, &z->zeta2theta, &z->alpha,
                          &z->zetan, &z->eta))
        return -1;
    if ((g->kind == G_UNIFORM || g->kind == G_SCRAMBLED || g->kind == G_SEQUENTIAL || g->kind == G_HOTSPOT) &&
        g->interval <= 0 && !(g->kind == G_HOTSPOT && g->fraction <= 0)) {
        PyErr_SetString(PyExc_ValueError, "a generator over no values");
        return -1;
    }
    return 0;
}

static void Loop_dealloc(Loop *L) {
    if (L->clients)
        for (int n = 0; n < L->nclients; n++) PyMem_Free(L->clients[n].values);
    PyMem_Free(L->clients);
    if (L->links)
        for (int l = 0; l < L->nlinks; l++) PyMem_Free(L->links[l].out), PyMem_Free(L->links[l].in);
    PyMem_Free(L->links);
    for (int s = 0; s < SLOTS; s++)
        PyMem_Free(L->latency[s].count), PyMem_Free(L->latency[s].touched), PyMem_Free(L->latency[s].far);
    PyMem_Free(L->field_bytes);
    PyMem_Free(L->field_blen);
    PyMem_Free(L->field_order);
    PyMem_Free(L->ack_window);
    Py_XDECREF(L->field_names);
    Py_XDECREF(L->writes);
    Py_XDECREF(L->failures);
    Py_XDECREF(L->lost);
    Py_TYPE(L)->tp_free((PyObject *)L);
}

static int compare_names(const void *a, const void *b, void *names) {
    return PyUnicode_Compare(PyTuple_GET_ITEM((PyObject *)names, *(const int *)a),
                             PyTuple_GET_ITEM((PyObject *)names, *(const int *)b));
}

/* Loop(clients, links, operations, key_chooser, field_length, field_chooser, fields, flags, counts, call_timeout)
 *   clients: [(random.Random.getstate()[1], limit, link)]; operations: [(share, kind)] in the chooser's order
 *   (kinds 0 READ, 1 UPDATE, 2 INSERT, 3 READMODIFYWRITE); fields: the field names;
 *   flags: (readallfields, writeallfields, ordered, zeropadding);
 *   counts: (recordcount, shard index, shard pods, fieldlength at most, insert counter next, insert limit) */
static int Loop_init(Loop *L, PyObject *args, PyObject *Py_UNUSED(kwds)) {
    PyObject *clients, *operations, *key_spec, *length_spec, *chooser_spec, *fields;
    int nlinks;
    double call_timeout;
    if (!PyArg_ParseTuple(args, "O!iO!OOOO!(pppi)(LLLLLL)d", &PyList_Type, &clients, &nlinks, &PyList_Type, &operations,
                          &key_spec, &length_spec, &chooser_spec, &PyTuple_Type, &fields, &L->readallfields,
                          &L->writeallfields, &L->ordered, &L->zeropadding, &L->recordcount, &L->shard_index,
                          &L->shard_pods, &L->fieldlength_max, &L->insert_next, &L->insert_limit, &call_timeout))
        return -1;
    if (parse_gen(key_spec, &L->key_chooser) < 0 || parse_gen(length_spec, &L->field_length) < 0 ||
        parse_gen(chooser_spec, &L->field_chooser) < 0)
        return -1;
    L->nfields = (int)PyTuple_GET_SIZE(fields);
    L->nops = (int)PyList_GET_SIZE(operations);
    L->nclients = (int)PyList_GET_SIZE(clients);
    if (L->nfields < 1 || L->nfields > MAX_FIELDS || L->nops < 1 || L->nops > OP_KINDS || nlinks < 1 ||
        nlinks > 64 || L->nclients < 1) {
        PyErr_SetString(PyExc_ValueError, "the compiled loop takes 1-64 fields, 1-4 operations, 1-64 links, a client or more");
        return -1;
    }
    for (int i = 0; i < L->nops; i++)
        if (!PyArg_ParseTuple(PyList_GET_ITEM(operations, i), "di", &L->op_share[i], &L->op_kind[i])) return -1;
    L->field_names = Py_NewRef(fields);
    L->field_bytes = PyMem_Calloc(L->nfields, sizeof(char *));
    L->field_blen = PyMem_Calloc(L->nfields, sizeof(Py_ssize_t));
    L->field_order = PyMem_Calloc(L->nfields, sizeof(int));
    L->ack_window = PyMem_Calloc(ACK_WINDOW, 1);
    L->writes = PyList_New(0), L->failures = PyList_New(0), L->lost = PyList_New(0);
    if (!L->field_bytes || !L->field_blen || !L->field_order || !L->ack_window || !L->writes ||
        !L->failures || !L->lost) {
        PyErr_NoMemory();
        return -1;
    }
    for (int f = 0; f < L->nfields; f++) {
        const char *s = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(fields, f), &L->field_blen[f]);
        if (!s) return -1;
        L->field_bytes[f] = (char *)s; /* kept alive by field_names */
        L->field_order[f] = f;
    }
    qsort_r(L->field_order, L->nfields, sizeof(int), compare_names, fields);
    if (PyErr_Occurred()) return -1;
    for (int s = 0; s < SLOTS; s++) {
        L->latency[s].count = PyMem_Calloc(DENSE_US, sizeof(int32_t));
        L->latency[s].touched = PyMem_Calloc(DENSE_US, sizeof(int32_t));
        if (!L->latency[s].count || !L->latency[s].touched) {
            PyErr_NoMemory();
            return -1;
        }
    }
    L->nlinks = nlinks;
    L->links = PyMem_Calloc(nlinks, sizeof(Link));
    L->clients = PyMem_Calloc(L->nclients, sizeof(Client));
    if (!L->links || !L->clients) {
        PyErr_NoMemory();
        return -1;
    }
    for (int l = 0; l < nlinks; l++) L->links[l].fd = -1;
    for (int n = 0; n < L->nclients; n++) {
        Client *c = &L->clients[n];
        PyObject *state;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(clients, n), "OLi", &state, &c->limit, &c->link) ||
            mt_from_state(&c->mt, state) < 0)
            return -1;
        if (c->link < 0 || c->link >= nlinks) {
            PyErr_Format(PyExc_ValueError, "client %d on no link (%d)", n, c->link);
            return -1;
        }
        c->values = PyMem_Calloc((size_t)L->nfields * (size_t)(L->fieldlength_max + 1), 1); /* a zipfian length may be max + 1 */
        if (!c->values) {
            PyErr_NoMemory();
            return -1;
        }
    }
    L->call_timeout_ns = (int64_t)(call_timeout * 1e9);
    return 0;
}

static PyMethodDef Loop_methods[] = {
    {"run", (PyCFunction)Loop_run, METH_VARARGS, "run(seconds, stopping): one slice; its report"},
    {"set_link", (PyCFunction)Loop_set_link, METH_VARARGS, "set_link(i, fd): link i's socket (-1: down)"},
    {"draw", (PyCFunction)Loop_draw, METH_VARARGS, "draw(client, count): the client's next operations"},
    {"encode", (PyCFunction)Loop_encode, METH_VARARGS, "encode(client, handle): the call of its last operation"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject LoopType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tpcc_runner.ycsb._voltloop.Loop",
    .tp_basicsize = sizeof(Loop),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The pipelined YCSB clients of a process on VoltDB, compiled.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Loop_init,
    .tp_dealloc = (destructor)Loop_dealloc,
    .tp_methods = Loop_methods,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, .m_name = "_voltloop", .m_doc = "The pipelined YCSB clients on VoltDB, compiled.", .m_size = -1};

PyMODINIT_FUNC PyInit__voltloop(void) {
    if (PyType_Ready(&LoopType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    if (PyModule_AddObjectRef(m, "Loop", (PyObject *)&LoopType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
