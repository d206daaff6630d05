/*
 * Accelerator for the footer reader (service/parquet/footer/): the same table-driven Thrift
 * Compact Protocol decoder, in C.
 *
 * The Python package stays the specification: it declares every struct as a table (field id ->
 * slot, kind, argument; footer/thrift_tables.py), holds the error messages and the
 * forward-compatibility rules. footer/accel.py hands this module the same tables as programs, and
 * it produces the same Python values, only faster. It never reports an error itself: on anything
 * unusual (corrupt or truncated input, an unknown enum value, a union with two members, a nesting
 * limit) it gives up and returns None, and the generated Python reader (footer/codegen.py) decodes
 * the bytes again, raising the precise InvalidParquetError or accepting the oddity. So this code
 * must (1) never read outside the buffer and (2) never accept what the Python reader rejects;
 * tests/parquet/footer/test_accel.py holds both readers to the same answers on real, mutated and
 * crafted footers.
 *
 * Fields a table marks as interned (the schema) are kept by their exact bytes and handed out
 * again as the same object (see Interned). The module also exports Builder, which fills a slots
 * dataclass the way the decoder does, for the extractor's result objects.
 *
 * Wire format quotes are from apache/thrift doc/specs/thrift-compact-protocol.md.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

/* Value kinds, as numbered in footer/compact.py (K_*). */
enum { K_BOOL = 0, K_INT = 1, K_ENUM = 2, K_BYTES = 3, K_STR = 4, K_TEXT = 5, K_STRUCT = 6, K_LIST = 7 };
/* How a struct's result is built (footer/compact.py Struct.make / spread). */
enum { MODE_SLOTS = 0, MODE_SPREAD = 1, MODE_LIST = 2 };

/* "BOOLEAN_TRUE 1, BOOLEAN_FALSE 2, I8 3, I16 4, I32 5, I64 6, DOUBLE 7, BINARY 8, LIST 9,
 *  SET 10, MAP 11, STRUCT 12, UUID 13" */
enum { W_TRUE = 1, W_FALSE = 2, W_I8 = 3, W_I16 = 4, W_I32 = 5, W_I64 = 6, W_DOUBLE = 7,
       W_BINARY = 8, W_LIST = 9, W_SET = 10, W_MAP = 11, W_STRUCT = 12, W_UUID = 13 };

typedef struct {
    int present;
    int slot;
    int kind;
    int elem_kind;      /* K_LIST only */
    int sub;            /* K_STRUCT, or K_LIST of structs: program index */
    PyObject *table;    /* K_ENUM, or K_LIST of enums: dict int -> str (borrowed from programs) */
    int intern;         /* remember the value by its bytes (see Interned) */
} FieldDef;

typedef struct {
    int nslots;
    int mode;
    PyObject *make;            /* class (MODE_SLOTS) or callable */
    Py_ssize_t *offsets;       /* MODE_SLOTS: byte offset of each slot member in the instance */
    PyObject **defaults;       /* nslots strong refs */
    int nrequired;
    int *required;
    int max_fid;
    FieldDef *by_fid;          /* indexed by field id, 0..max_fid */
} Program;

/* A decoded value of an interned field (Struct(..., interned=...)), with the exact bytes it was
 * decoded from. The reader is a deterministic function of the bytes it consumes (and of the
 * depth, for the nesting limit), so the same bytes at the same depth decode to an equal value
 * ending after those bytes: the cached value (immutable: tuples of frozen dataclasses) is
 * returned instead, the same object each time. Files of one table share their schema, so a batch
 * decodes it once, and callers can key their own caches on the object's identity. */
typedef struct {
    const void *field;         /* the FieldDef; NULL: an empty entry */
    int depth;
    PyObject *bytes;
    PyObject *value;
} Interned;

/* A few schemas (a table's evolution) stay cached; a larger value is never kept. */
#define INTERN_ENTRIES 8
#define INTERN_MAX_BYTES (64 * 1024)

typedef struct {
    PyObject_HEAD
    int nprograms;
    Program *programs;
    PyObject *keepalive;       /* the programs tuple: owns every table, class and callable */
    Interned interned[INTERN_ENTRIES];
    int intern_next;           /* the entry replaced next (round robin) */
} Decoder;

/* Mirrors footer.MAX_THRIFT_DEPTH; passed in by footer/accel.py. */
static int max_depth = 64;

typedef struct {
    const unsigned char *buf;
    Py_ssize_t len;
    Py_ssize_t pos;
} Reader;

/* --- wire primitives: each returns 0 on success, -1 to give up ------------------------------ */

/* "Var ints take 1 to 5 bytes (int32) or 1 to 10 bytes (int64)." The Python reader allows
 * max_bytes bytes and rejects values of 64 bits or more; so does this. */
static int read_uvarint(Reader *r, int max_bytes, uint64_t *out)
{
    uint64_t v = 0;
    int shift = 0;
    for (int i = 0; i < max_bytes; i++) {
        if (r->pos >= r->len)
            return -1;
        unsigned char b = r->buf[r->pos++];
        uint64_t bits = (uint64_t)(b & 0x7F);
        if (shift == 63 && bits > 1)
            return -1; /* overflows 64 bits */
        v |= bits << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
        shift += 7;
    }
    return -1;
}

static inline int64_t zigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* "ssss is the size, 4 bit unsigned int, values 0 - 14"; 15: "size is the size, a var int". */
static int read_list_header(Reader *r, int depth, Py_ssize_t *size, int *elem)
{
    if (depth > max_depth || r->pos >= r->len)
        return -1;
    unsigned char h = r->buf[r->pos++];
    uint64_t n = h >> 4;
    if (n == 15 && read_uvarint(r, 5, &n) < 0)
        return -1;
    /* Every element takes at least one byte: a larger count cannot be honest. */
    if (n > (uint64_t)(r->len - r->pos))
        return -1;
    *size = (Py_ssize_t)n;
    *elem = h & 0x0F;
    return 0;
}

static int skip_varint(Reader *r)
{
    Py_ssize_t start = r->pos;
    for (;;) {
        if (r->pos >= r->len)
            return -1;
        if (!(r->buf[r->pos++] & 0x80))
            break;
    }
    return r->pos - start > 10 ? -1 : 0;
}

/* "these are simply ignored": steps over one value of an unmodelled field. */
static int skip_value(Reader *r, int wire, int depth)
{
    if (depth > max_depth)
        return -1;
    switch (wire) {
    case W_TRUE:
    case W_FALSE:
        return 0;
    case W_I16:
    case W_I32:
    case W_I64:
        return skip_varint(r);
    case W_I8:
        r->pos += 1;
        break;
    case W_DOUBLE:
        r->pos += 8;
        break;
    case W_UUID:
        r->pos += 16;
        break;
    case W_BINARY: {
        uint64_t n;
        if (read_uvarint(r, 5, &n) < 0)
            return -1;
        if (n > (uint64_t)(r->len - r->pos))
            return -1;
        r->pos += (Py_ssize_t)n;
        break;
    }
    case W_STRUCT:
        for (;;) {
            if (r->pos >= r->len)
                return -1;
            unsigned char h = r->buf[r->pos++];
            if (h == 0)
                break;
            if (!(h >> 4)) {
                uint64_t ignored;
                if (read_uvarint(r, 3, &ignored) < 0)
                    return -1;
            }
            int w = h & 0x0F;
            if (w >= W_I16 && w <= W_I64) {
                if (skip_varint(r) < 0)
                    return -1;
            } else if (w != W_TRUE && w != W_FALSE) {
                if (skip_value(r, w, depth + 1) < 0)
                    return -1;
            }
        }
        break;
    case W_LIST:
    case W_SET: {
        Py_ssize_t size;
        int elem;
        if (read_list_header(r, depth + 1, &size, &elem) < 0)
            return -1;
        if (elem == W_TRUE || elem == W_FALSE) {
            r->pos += size;
        } else if (elem >= W_I16 && elem <= W_I64) {
            for (Py_ssize_t i = 0; i < size; i++)
                if (skip_varint(r) < 0)
                    return -1;
        } else {
            for (Py_ssize_t i = 0; i < size; i++)
                if (skip_value(r, elem, depth + 1) < 0)
                    return -1;
        }
        break;
    }
    case W_MAP: {
        uint64_t size;
        if (read_uvarint(r, 5, &size) < 0)
            return -1;
        if (size) {
            if (2 * size > (uint64_t)(r->len - r->pos) || r->pos >= r->len)
                return -1;
            unsigned char types = r->buf[r->pos++];
            int kw = types >> 4, vw = types & 0x0F;
            for (uint64_t i = 0; i < size; i++) {
                int ws[2] = {kw, vw};
                for (int j = 0; j < 2; j++) {
                    if (ws[j] == W_TRUE || ws[j] == W_FALSE)
                        r->pos += 1;
                    else if (skip_value(r, ws[j], depth + 1) < 0)
                        return -1;
                }
            }
        }
        break;
    }
    default:
        return -1; /* unknown compact type */
    }
    return r->pos > r->len ? -1 : 0;
}

/* --- values ----------------------------------------------------------------------------------- */

static PyObject *read_struct(Decoder *d, int prog, Reader *r, int depth);

/* Integer field: "zigzag int ... then encoded as a var int" for i16/i32/i64; i8 is one byte. */
static int read_int_field(Reader *r, int wire, int64_t *out)
{
    if (wire >= W_I16 && wire <= W_I64) {
        uint64_t v;
        if (read_uvarint(r, 10, &v) < 0)
            return -1;
        *out = zigzag(v);
        return 0;
    }
    if (wire == W_I8) {
        if (r->pos >= r->len)
            return -1;
        *out = (int64_t)(signed char)r->buf[r->pos++];
        return 0;
    }
    return -1;
}

static PyObject *enum_name(PyObject *table, int64_t v)
{
    PyObject *key = PyLong_FromLongLong(v);
    if (key == NULL)
        return NULL;
    PyObject *name = PyDict_GetItemWithError(table, key); /* borrowed */
    Py_DECREF(key);
    if (name == NULL)
        return NULL; /* unknown value: the Python reader decides (UNKNOWN_n or an error) */
    Py_INCREF(name);
    return name;
}

/* "byte length is the length of the byte array, using var int encoding" then the bytes. */
static PyObject *read_binary(Reader *r, int kind)
{
    uint64_t n;
    if (read_uvarint(r, 5, &n) < 0 || n > (uint64_t)(r->len - r->pos))
        return NULL;
    const char *s = (const char *)r->buf + r->pos;
    r->pos += (Py_ssize_t)n;
    if (kind == K_BYTES)
        return PyBytes_FromStringAndSize(s, (Py_ssize_t)n);
    /* Names and paths are strict UTF-8; informational text replaces stray bytes. */
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, kind == K_STR ? NULL : "replace");
}

static PyObject *read_list(Decoder *d, const FieldDef *f, Reader *r, int depth)
{
    Py_ssize_t size;
    int elem;
    if (read_list_header(r, depth, &size, &elem) < 0)
        return NULL;
    if (size == 0)
        return PyTuple_New(0);
    int k = f->elem_kind;
    if (k == K_STRUCT ? elem != W_STRUCT
        : (k == K_INT || k == K_ENUM) ? !(elem >= W_I16 && elem <= W_I64)
        : elem != W_BINARY)
        return NULL;
    PyObject *out = PyTuple_New(size);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < size; i++) {
        PyObject *v;
        if (k == K_STRUCT) {
            v = read_struct(d, f->sub, r, depth);
        } else if (k == K_INT || k == K_ENUM) {
            uint64_t raw;
            if (read_uvarint(r, 10, &raw) < 0) {
                Py_DECREF(out);
                return NULL;
            }
            v = k == K_INT ? PyLong_FromLongLong(zigzag(raw)) : enum_name(f->table, zigzag(raw));
        } else {
            v = read_binary(r, k);
        }
        if (v == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, i, v);
    }
    return out;
}

static PyObject *read_interned(Decoder *d, const FieldDef *f, Reader *r, int depth)
{
    Py_ssize_t start = r->pos;
    for (int i = 0; i < INTERN_ENTRIES; i++) {
        Interned *e = &d->interned[i];
        if (e->field != (const void *)f || e->depth != depth)
            continue;
        Py_ssize_t n = PyBytes_GET_SIZE(e->bytes);
        if (n <= r->len - start && memcmp(r->buf + start, PyBytes_AS_STRING(e->bytes), (size_t)n) == 0) {
            r->pos = start + n;
            return Py_NewRef(e->value);
        }
    }
    PyObject *v = read_list(d, f, r, depth + 1);
    if (v == NULL || r->pos - start > INTERN_MAX_BYTES)
        return v;
    PyObject *bytes = PyBytes_FromStringAndSize((const char *)r->buf + start, r->pos - start);
    if (bytes == NULL) {
        Py_DECREF(v);
        return NULL;
    }
    Interned *e = &d->interned[d->intern_next];
    d->intern_next = (d->intern_next + 1) % INTERN_ENTRIES;
    Py_XSETREF(e->bytes, bytes);
    Py_XSETREF(e->value, Py_NewRef(v));
    e->field = f;
    e->depth = depth;
    return v;
}

static PyObject *read_field(Decoder *d, const FieldDef *f, Reader *r, int wire, int depth)
{
    int64_t v;
    switch (f->kind) {
    case K_BOOL:
        /* "Field values are encoded directly in the field header." */
        if (wire == W_TRUE)
            Py_RETURN_TRUE;
        if (wire == W_FALSE)
            Py_RETURN_FALSE;
        return NULL;
    case K_INT:
        if (read_int_field(r, wire, &v) < 0)
            return NULL;
        return PyLong_FromLongLong(v);
    case K_ENUM:
        /* "Enums ... encoded as an int32": an i8 is a type mismatch for the Python reader too. */
        if (!(wire >= W_I16 && wire <= W_I64) || read_int_field(r, wire, &v) < 0)
            return NULL;
        return enum_name(f->table, v);
    case K_BYTES:
    case K_STR:
    case K_TEXT:
        if (wire != W_BINARY)
            return NULL;
        return read_binary(r, f->kind);
    case K_STRUCT:
        if (wire != W_STRUCT)
            return NULL;
        return read_struct(d, f->sub, r, depth + 1);
    case K_LIST:
        if (wire != W_LIST && wire != W_SET)
            return NULL;
        if (f->intern)
            return read_interned(d, f, r, depth);
        return read_list(d, f, r, depth + 1);
    }
    return NULL;
}

#define MAX_SLOTS 32

static PyObject *build(const Program *p, PyObject **slots)
{
    PyObject *result = NULL;
    if (p->mode == MODE_SLOTS) {
        /* A frozen slots dataclass filled the way its __init__ would (object.__setattr__ per
         * field), without running that Python code: the members are written at their offsets. */
        PyTypeObject *cls = (PyTypeObject *)p->make;
        result = cls->tp_alloc(cls, 0);
        if (result == NULL)
            return NULL;
        for (int i = 0; i < p->nslots; i++) {
            *(PyObject **)((char *)result + p->offsets[i]) = slots[i];
            slots[i] = NULL; /* reference moved into the instance */
        }
        return result;
    }
    if (p->mode == MODE_SPREAD)
        return PyObject_Vectorcall(p->make, slots, (size_t)p->nslots, NULL);
    PyObject *list = PyList_New(p->nslots);
    if (list == NULL)
        return NULL;
    for (int i = 0; i < p->nslots; i++) {
        Py_INCREF(slots[i]);
        PyList_SET_ITEM(list, i, slots[i]);
    }
    result = PyObject_CallOneArg(p->make, list);
    Py_DECREF(list);
    return result;
}

static PyObject *read_struct(Decoder *d, int prog, Reader *r, int depth)
{
    if (depth > max_depth)
        return NULL;
    const Program *p = &d->programs[prog];
    PyObject *slots[MAX_SLOTS];
    PyObject *result = NULL;
    for (int i = 0; i < p->nslots; i++) {
        slots[i] = p->defaults[i];
        Py_INCREF(slots[i]);
    }
    int64_t last = 0;
    for (;;) {
        if (r->pos >= r->len)
            goto done;
        unsigned char h = r->buf[r->pos++];
        if (h == 0)
            break;
        int wire = h & 0x0F;
        int64_t fid;
        if (h > 15) {
            /* "field id delta, a 4 bit unsigned int, values 1 - 15" */
            fid = last + (h >> 4);
        } else {
            /* "field id the field id, a signed 16 bit integer encoded as zigzag int." */
            uint64_t raw;
            if (read_uvarint(r, 3, &raw) < 0)
                goto done;
            fid = zigzag(raw);
        }
        last = fid;
        if (fid >= 0 && fid <= p->max_fid && p->by_fid[fid].present) {
            const FieldDef *f = &p->by_fid[fid];
            PyObject *v = read_field(d, f, r, wire, depth);
            if (v == NULL)
                goto done;
            Py_SETREF(slots[f->slot], v); /* a repeated field id: the last one wins */
        } else if (skip_value(r, wire, depth + 1) < 0) {
            goto done; /* (also for booleans: the Python reader checks the depth there too) */
        }
    }
    for (int i = 0; i < p->nrequired; i++)
        if (slots[p->required[i]] == Py_None)
            goto done;
    result = build(p, slots);
done:
    for (int i = 0; i < p->nslots; i++)
        Py_XDECREF(slots[i]);
    return result;
}

/* --- the Decoder type ------------------------------------------------------------------------- */

static void clear_interned(Decoder *d)
{
    for (int i = 0; i < INTERN_ENTRIES; i++) {
        Interned *e = &d->interned[i];
        e->field = NULL;
        Py_CLEAR(e->bytes);
        Py_CLEAR(e->value);
    }
    d->intern_next = 0;
}

static void free_programs(Decoder *d)
{
    clear_interned(d); /* entries point into the programs */
    if (d->programs == NULL)
        return;
    for (int i = 0; i < d->nprograms; i++) {
        Program *p = &d->programs[i];
        if (p->defaults) {
            for (int j = 0; j < p->nslots; j++)
                Py_XDECREF(p->defaults[j]);
            PyMem_Free(p->defaults);
        }
        PyMem_Free(p->offsets);
        PyMem_Free(p->required);
        PyMem_Free(p->by_fid);
    }
    PyMem_Free(d->programs);
    d->programs = NULL;
}

static void Decoder_dealloc(Decoder *d)
{
    free_programs(d);
    Py_XDECREF(d->keepalive);
    Py_TYPE(d)->tp_free((PyObject *)d);
}

static int fail(const char *msg)
{
    PyErr_SetString(PyExc_ValueError, msg);
    return -1;
}

/* A program: (nslots, mode, make, offsets|None, defaults, required, fields) with fields a tuple of
 * (fid, slot, kind, elem_kind, sub, table|None, intern). Checked here, so decoding need not check. */
static int load_program(Program *p, PyObject *spec, int nprograms)
{
    PyObject *make, *offsets, *defaults, *required, *fields;
    if (!PyArg_ParseTuple(spec, "iiOOO!O!O!", &p->nslots, &p->mode, &make, &offsets, &PyTuple_Type,
                          &defaults, &PyTuple_Type, &required, &PyTuple_Type, &fields))
        return -1;
    if (p->nslots < 0 || p->nslots > MAX_SLOTS || PyTuple_GET_SIZE(defaults) != p->nslots)
        return fail("bad slot count");
    if (p->mode < MODE_SLOTS || p->mode > MODE_LIST)
        return fail("bad mode");
    p->make = make; /* kept alive by the programs tuple */
    p->defaults = PyMem_Calloc(p->nslots ? p->nslots : 1, sizeof(PyObject *));
    if (p->defaults == NULL)
        return -1;
    for (int i = 0; i < p->nslots; i++) {
        p->defaults[i] = PyTuple_GET_ITEM(defaults, i);
        Py_INCREF(p->defaults[i]);
    }
    if (p->mode == MODE_SLOTS) {
        if (!PyType_Check(make) || !PyTuple_Check(offsets) || PyTuple_GET_SIZE(offsets) != p->nslots)
            return fail("slots mode needs a class and one member descriptor per slot");
        p->offsets = PyMem_Calloc(p->nslots ? p->nslots : 1, sizeof(Py_ssize_t));
        if (p->offsets == NULL)
            return -1;
        for (int i = 0; i < p->nslots; i++) {
            PyObject *descr = PyTuple_GET_ITEM(offsets, i);
            if (!Py_IS_TYPE(descr, &PyMemberDescr_Type))
                return fail("not a member descriptor");
            PyMemberDescrObject *m = (PyMemberDescrObject *)descr;
            if (m->d_common.d_type != (PyTypeObject *)make || m->d_member->type != T_OBJECT_EX)
                return fail("member descriptor of another class or type");
            p->offsets[i] = m->d_member->offset;
        }
    }
    p->nrequired = (int)PyTuple_GET_SIZE(required);
    p->required = PyMem_Calloc(p->nrequired ? p->nrequired : 1, sizeof(int));
    if (p->required == NULL)
        return -1;
    for (int i = 0; i < p->nrequired; i++) {
        long s = PyLong_AsLong(PyTuple_GET_ITEM(required, i));
        if (s < 0 || s >= p->nslots)
            return PyErr_Occurred() ? -1 : fail("bad required slot");
        p->required[i] = (int)s;
    }
    p->max_fid = 0;
    Py_ssize_t nf = PyTuple_GET_SIZE(fields);
    for (Py_ssize_t i = 0; i < nf; i++) {
        long fid = PyLong_AsLong(PyTuple_GET_ITEM(PyTuple_GET_ITEM(fields, i), 0));
        if (fid < 0 || fid > 255)
            return PyErr_Occurred() ? -1 : fail("field ids must be 0..255");
        if (fid > p->max_fid)
            p->max_fid = (int)fid;
    }
    p->by_fid = PyMem_Calloc(p->max_fid + 1, sizeof(FieldDef));
    if (p->by_fid == NULL)
        return -1;
    for (Py_ssize_t i = 0; i < nf; i++) {
        int fid, slot, kind, elem_kind, sub, intern;
        PyObject *table;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(fields, i), "iiiiiOp", &fid, &slot, &kind, &elem_kind, &sub,
                              &table, &intern))
            return -1;
        FieldDef *f = &p->by_fid[fid];
        if (slot < 0 || slot >= p->nslots || kind < K_BOOL || kind > K_LIST)
            return fail("bad field");
        int k = kind == K_LIST ? elem_kind : kind;
        if ((k == K_STRUCT && (sub < 0 || sub >= nprograms)) || (k == K_ENUM && !PyDict_Check(table))
            || (kind == K_LIST && (elem_kind == K_BOOL || elem_kind == K_LIST)) || (intern && kind != K_LIST))
            return fail("bad field argument");
        f->present = 1;
        f->slot = slot;
        f->kind = kind;
        f->elem_kind = elem_kind;
        f->sub = sub;
        f->table = table;
        f->intern = intern;
    }
    return 0;
}

static int Decoder_init(Decoder *d, PyObject *args, PyObject *kwds)
{
    PyObject *programs;
    if (!PyArg_ParseTuple(args, "O!i", &PyTuple_Type, &programs, &max_depth))
        return -1;
    free_programs(d);
    Py_XSETREF(d->keepalive, Py_NewRef(programs));
    d->nprograms = (int)PyTuple_GET_SIZE(programs);
    d->programs = PyMem_Calloc(d->nprograms ? d->nprograms : 1, sizeof(Program));
    if (d->programs == NULL)
        return -1;
    for (int i = 0; i < d->nprograms; i++)
        if (load_program(&d->programs[i], PyTuple_GET_ITEM(programs, i), d->nprograms) < 0)
            return -1;
    return 0;
}

/* decode(program, buf, pos, depth) -> (value, new_pos), or None: "let the Python reader decide". */
static PyObject *Decoder_decode(Decoder *d, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4)
        return PyErr_Format(PyExc_TypeError, "decode() takes 4 arguments");
    int prog = PyLong_AsLong(args[0]);
    Py_ssize_t pos = PyLong_AsSsize_t(args[2]);
    int depth = PyLong_AsLong(args[3]);
    if (PyErr_Occurred())
        return NULL;
    if (prog < 0 || prog >= d->nprograms || pos < 0)
        return PyErr_Format(PyExc_ValueError, "bad program or position");
    Py_buffer view;
    if (PyObject_GetBuffer(args[1], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    Reader r = {(const unsigned char *)view.buf, view.len, pos};
    PyObject *value = pos <= view.len ? read_struct(d, prog, &r, depth) : NULL;
    PyBuffer_Release(&view);
    if (value == NULL) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    PyObject *out = Py_BuildValue("(Nn)", value, r.pos);
    return out;
}

static PyMethodDef Decoder_methods[] = {
    {"decode", (PyCFunction)(void (*)(void))Decoder_decode, METH_FASTCALL,
     "decode(program, buf, pos, depth) -> (value, pos) or None"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject DecoderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "service.parquet._compact.Decoder",
    .tp_basicsize = sizeof(Decoder),
    .tp_dealloc = (destructor)Decoder_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Thrift compact decoder driven by service.parquet.footer's struct tables.",
    .tp_methods = Decoder_methods,
    .tp_init = (initproc)Decoder_init,
    .tp_new = PyType_GenericNew,
};

/* --- Builder: instances of a slots dataclass, filled without running its __init__ ------------- */

/* Builder(cls, members)(*values): an instance of cls whose slots (member descriptors `members`,
 * in field order) hold `values`, as the decoder builds MODE_SLOTS structs. The generated __init__
 * of a frozen dataclass sets each field through object.__setattr__ (2 µs for ten fields); the
 * extractor builds one object per path and file. footer/accel.py only hands over classes whose
 * __init__ does nothing else. */
typedef struct {
    PyObject_HEAD
    PyTypeObject *cls;
    PyObject *members;
    Py_ssize_t nslots;
    Py_ssize_t *offsets;
    vectorcallfunc vectorcall;
} Builder;

static PyObject *Builder_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Builder *b = (Builder *)self;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if ((kwnames != NULL && PyTuple_GET_SIZE(kwnames)) || n != b->nslots)
        return PyErr_Format(PyExc_TypeError, "building %s takes exactly %zd positional arguments",
                            b->cls->tp_name, b->nslots);
    PyObject *obj = b->cls->tp_alloc(b->cls, 0);
    if (obj == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++)
        *(PyObject **)((char *)obj + b->offsets[i]) = Py_NewRef(args[i]);
    return obj;
}

static int Builder_init(Builder *b, PyObject *args, PyObject *kwds)
{
    PyObject *cls, *members;
    if (b->cls != NULL)
        return fail("a Builder is initialised once");
    if (!PyArg_ParseTuple(args, "O!O!", &PyType_Type, &cls, &PyTuple_Type, &members))
        return -1;
    Py_ssize_t n = PyTuple_GET_SIZE(members);
    b->offsets = PyMem_Calloc(n ? n : 1, sizeof(Py_ssize_t));
    if (b->offsets == NULL)
        return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *descr = PyTuple_GET_ITEM(members, i);
        if (!Py_IS_TYPE(descr, &PyMemberDescr_Type))
            return fail("not a member descriptor");
        PyMemberDescrObject *m = (PyMemberDescrObject *)descr;
        if (m->d_common.d_type != (PyTypeObject *)cls || m->d_member->type != T_OBJECT_EX)
            return fail("member descriptor of another class or type");
        b->offsets[i] = m->d_member->offset;
    }
    b->nslots = n;
    b->cls = (PyTypeObject *)Py_NewRef(cls);
    b->members = Py_NewRef(members);
    b->vectorcall = Builder_vectorcall;
    return 0;
}

static PyObject *Builder_call(PyObject *self, PyObject *args, PyObject *kwds)
{
    if (((Builder *)self)->cls == NULL)
        return PyErr_Format(PyExc_TypeError, "Builder not initialised");
    return PyVectorcall_Call(self, args, kwds);
}

static void Builder_dealloc(Builder *b)
{
    Py_XDECREF(b->cls);
    Py_XDECREF(b->members);
    PyMem_Free(b->offsets);
    Py_TYPE(b)->tp_free((PyObject *)b);
}

static PyTypeObject BuilderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "service.parquet._compact.Builder",
    .tp_basicsize = sizeof(Builder),
    .tp_dealloc = (destructor)Builder_dealloc,
    .tp_vectorcall_offset = offsetof(Builder, vectorcall),
    .tp_call = Builder_call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "Builder(cls, members)(*values): a slots dataclass instance filled in C.",
    .tp_init = (initproc)Builder_init,
    .tp_new = PyType_GenericNew,
};

static struct PyModuleDef compact_module = {
    PyModuleDef_HEAD_INIT, "_compact", "C accelerator for service.parquet.footer.", -1, NULL,
};

PyMODINIT_FUNC PyInit__compact(void)
{
    if (PyType_Ready(&DecoderType) < 0 || PyType_Ready(&BuilderType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&compact_module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&DecoderType);
    if (PyModule_AddObject(m, "Decoder", (PyObject *)&DecoderType) < 0) {
        Py_DECREF(&DecoderType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&BuilderType);
    if (PyModule_AddObject(m, "Builder", (PyObject *)&BuilderType) < 0) {
        Py_DECREF(&BuilderType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
