// Hostile snapshot archives (issue 33, finding 3), made from a good one as `GET /v1/snapshot`
// saves it: each kind has exactly one defect, and the reason a restore must give for it. Shared by
// bench/snapshot/hostile-restore.js and packages/server/test/snapshot/hostile-archives.test.ts.
// Headers are written by hand (ustar), so that any field can hold what a hostile writer puts there.
'use strict';
const { createHash } = require('node:crypto');
const { gunzipSync, gzipSync } = require('node:zlib');

const BLOCK = 512;

/** The members of a good archive (as our writer makes it: ustar, meta.json, state.bin, SHA256SUMS). */
function membersOf(archive) {
  const tar = gunzipSync(archive);
  const out = [];
  for (let at = 0; at + BLOCK <= tar.length; ) {
    const header = tar.subarray(at, at + BLOCK);
    if (header.every((b) => b === 0)) break;
    const name = header.toString('latin1', 0, 100).replace(/\0.*$/s, '');
    const size = parseInt(header.toString('latin1', 124, 136).replace(/\0.*$/s, '').trim(), 8);
    out.push({ name, data: Buffer.from(tar.subarray(at + BLOCK, at + BLOCK + size)) });
    at += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
  }
  return out;
}

function octal(value, width) {
  return Buffer.from(value.toString(8).padStart(width - 1, '0') + '\0', 'latin1');
}

/**
 * A ustar header. `o.size` (a Buffer) replaces the size field as given; `o.prefix` fills the prefix
 * field; `o.type` the type flag; `o.badChecksum` leaves the header checksum wrong.
 */
function header(name, length, o = {}) {
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 100, 'latin1');
  octal(0o644, 8).copy(h, 100);
  octal(0, 8).copy(h, 108);
  octal(0, 8).copy(h, 116);
  (o.size ?? octal(length, 12)).copy(h, 124);
  octal(1_700_000_000, 12).copy(h, 136);
  h[156] = (o.type ?? '0').charCodeAt(0);
  h.write('ustar\0', 257, 'latin1');
  h.write('00', 263, 'latin1');
  if (o.prefix) h.write(o.prefix, 345, 155, 'latin1');
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  if (o.badChecksum) sum += 1;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 'latin1');
  return h;
}

function entry(name, data, o = {}) {
  const pad = Buffer.alloc((BLOCK - (data.length % BLOCK)) % BLOCK);
  return Buffer.concat([header(name, data.length, o), data, pad]);
}

const END = Buffer.alloc(2 * BLOCK);
const tgz = (...parts) => gzipSync(Buffer.concat(parts));
const sha = (b) => createHash('sha256').update(b).digest('hex');

/**
 * [{ kind, archive, reason }] from a good archive: `reason` is a RegExp source the 400's body must
 * match. Every kind is small (at most a few MiB), whatever it declares.
 */
function hostileArchives(good) {
  const m = Object.fromEntries(membersOf(good).map((x) => [x.name, x.data]));
  const meta = m['meta.json'];
  const state = m['state.bin'];
  const sums = m['SHA256SUMS'];
  if (!meta || !state || !sums) throw new Error('the good archive lacks a member');
  const three = [entry('meta.json', meta), entry('state.bin', state), entry('SHA256SUMS', sums)];
  const tarBytes = Buffer.concat([...three, END]);
  const wrongSums = Buffer.from(`${sha(meta)}  meta.json\n${'0'.repeat(64)}  state.bin\n`);
  const extra = [];
  for (let i = 0; i < 10_000; i++) extra.push(entry(`extra-${i}.txt`, Buffer.from('x')));
  return [
    { kind: 'truncated gzip stream', archive: good.subarray(0, Math.floor(good.length * 0.7)), reason: 'not a complete gzip stream' },
    { kind: 'truncated tar in a complete gzip stream', archive: tgz(three[0], three[1].subarray(0, BLOCK + Math.floor(state.length / 2))), reason: 'truncated: state.bin ends early' },
    { kind: 'wrong checksum', archive: tgz(three[0], three[1], entry('SHA256SUMS', wrongSums), END), reason: 'checksum mismatch for state.bin' },
    { kind: 'huge declared size (octal, 8 GiB)', archive: tgz(three[0], header('state.bin', 0, { size: Buffer.from('77777777777\0', 'latin1') }), state), reason: 'state.bin declares 8589934591 bytes' },
    { kind: 'size not octal (c2 80 00)', archive: tgz(three[0], header('state.bin', 0, { size: Buffer.from([0xc2, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]) }), state), reason: 'size field that is not an octal number' },
    { kind: 'huge base-256 size', archive: tgz(three[0], header('state.bin', 0, { size: Buffer.from([0x80, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]) }), state), reason: 'size field that is not an octal number' },
    { kind: 'path-like name ../state.bin', archive: tgz(three[0], entry('../state.bin', state), three[2], END), reason: 'unexpected member "../state.bin"' },
    { kind: 'path-like name ./meta.json', archive: tgz(entry('./meta.json', meta), three[1], three[2], END), reason: 'unexpected member "./meta.json"' },
    { kind: 'name with a ustar prefix', archive: tgz(three[0], entry('state.bin', state, { prefix: '../..' }), three[2], END), reason: 'has a path prefix' },
    { kind: 'not a regular file', archive: tgz(three[0], entry('state.bin', Buffer.alloc(0), { type: '2' }), three[2], END), reason: 'state.bin is not a regular file' },
    { kind: '10,000 extra members', archive: tgz(...three, ...extra, END), reason: 'unexpected member "extra-0.txt"' },
    { kind: 'a member twice', archive: tgz(...three, three[1], END), reason: 'holds state.bin twice' },
    { kind: 'missing end blocks', archive: tgz(...three), reason: 'no end-of-archive blocks' },
    { kind: 'data after the end blocks', archive: tgz(...three, END, three[0]), reason: 'data after its end-of-archive blocks' },
    { kind: 'bad header checksum', archive: tgz(three[0], entry('state.bin', state, { badChecksum: true }), three[2], END), reason: 'header checksum does not match' },
    { kind: 'a missing member', archive: tgz(three[0], three[1], END), reason: 'has no SHA256SUMS' },
    { kind: 'not gzip at all', archive: tarBytes, reason: 'not a complete gzip stream' },
  ];
}

module.exports = { hostileArchives, membersOf, entry, header, END };
