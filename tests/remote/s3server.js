'use strict';
/* The tests' S3 server: s3rver 3.7.1 (installed by the Makefile into build/s3rver) with three things
   S3 does and s3rver 3.7.1 does not, so that recio's S3 column is tested against S3's behaviour:
   - Signature V4 is verified (s3rver only checks that the access key exists): a wrong secret, a
     missing or wrong session token, a badly canonicalised path or query is 403 SignatureDoesNotMatch;
   - AbortMultipartUpload (DELETE ?uploadId=) removes the upload and its parts (s3rver answers 405);
   - If-Match on GET and HEAD: 412 PreconditionFailed when the object's ETag differs (s3rver ignores it).
   Bucket "public" may be read without credentials; every other bucket refuses anonymous requests.
   Usage: node s3server.js DIR PORTFILE [BUCKET...]: listens on 127.0.0.1 and a free port, writes the
   port to PORTFILE, and exits when its parent's pipe closes or after RECIO_TEST_LIFETIME seconds. */
const path = require('path');
const fs = require('fs');
const crypto = require('crypto');
const mods = path.join(__dirname, '..', '..', process.env.RECIO_S3RVER_MODULES || 'build/s3rver/node_modules');
const S3rver = require(path.join(mods, 's3rver'));
const AWSAccount = require(path.join(mods, 's3rver/lib/models/account'));
const S3Error = require(path.join(mods, 's3rver/lib/models/error'));

/* The test credentials: key id -> [secret, session token or null]. */
const KEYS = {
  RECIOTESTKEY: ['recio-test-secret/+=', null],
  RECIOTMPKEY: ['recio-tmp-secret', 'recio-session-token/+='],
};
for (const k of Object.keys(KEYS)) AWSAccount.DUMMY_ACCOUNT.createKeyPair(k, KEYS[k][0]);

const rfc3986 = s => encodeURIComponent(s).replace(/[!'()*]/g, c => '%' + c.charCodeAt(0).toString(16).toUpperCase());
const hmac = (key, s) => crypto.createHmac('sha256', key).update(s).digest();
const sha256hex = s => crypto.createHash('sha256').update(s).digest('hex');

function canonicalQuery(raw) {
  if (!raw) return '';
  return raw.split('&').filter(p => p.length).map(p => {
    const i = p.indexOf('=');
    const k = decodeURIComponent(i < 0 ? p : p.slice(0, i));
    const v = i < 0 ? '' : decodeURIComponent(p.slice(i + 1));
    return [rfc3986(k), rfc3986(v)];
  }).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .map(kv => kv[0] + '=' + kv[1]).join('&');
}

function deny(code, msg) { throw new S3Error(code, msg); }

/* Signature V4 as S3 checks it (header form only: recio never presigns). */
function verifyV4(ctx) {
  const auth = ctx.get('authorization');
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(auth);
  if (!m) deny('AuthorizationHeaderMalformed', 'The authorization header is malformed.');
  const [, keyId, day, region, signed, signature] = m;
  const key = KEYS[keyId];
  if (!key) deny('InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.');
  const names = signed.split(';');
  if (!names.includes('host') || !names.includes('x-amz-date') || !names.includes('x-amz-content-sha256'))
    deny('AccessDenied', 'host, x-amz-date and x-amz-content-sha256 must be signed');
  const token = ctx.get('x-amz-security-token');
  if (key[1] !== null && (token !== key[1] || !names.includes('x-amz-security-token')))
    deny('InvalidToken', 'The provided token is malformed or otherwise invalid.');
  const date = ctx.get('x-amz-date');
  const when = Date.parse(date.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, '$1-$2-$3T$4:$5:$6Z'));
  if (!(Math.abs(Date.now() - when) < 900000) || date.slice(0, 8) !== day)
    deny('RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.');
  const raw = ctx.req.url;
  const q = raw.indexOf('?');
  const rawPath = q < 0 ? raw : raw.slice(0, q);
  const uri = rawPath.split('/').map(s => rfc3986(decodeURIComponent(s))).join('/');
  const headers = names.map(n => n + ':' + String(ctx.req.headers[n] || '').trim().replace(/ +/g, ' ') + '\n').join('');
  const canonical = [ctx.method, uri, canonicalQuery(q < 0 ? '' : raw.slice(q + 1)), headers, signed,
    ctx.get('x-amz-content-sha256')].join('\n');
  const scope = `${day}/${region}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', date, scope, sha256hex(canonical)].join('\n');
  let k = hmac('AWS4' + key[0], day);
  k = hmac(hmac(hmac(k, region), 's3'), 'aws4_request');
  if (hmac(k, toSign).toString('hex') !== signature)
    deny('SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.');
}

function bucketOf(ctx) { return decodeURIComponent(ctx.path.split('/')[1] || ''); }

async function checks(ctx, next) {
  if (ctx.get('authorization')) verifyV4(ctx);
  else if (bucketOf(ctx) !== 'public' && ctx.path !== '/') deny('AccessDenied', 'Access Denied');
  if (ctx.method === 'DELETE' && 'uploadId' in ctx.query) return abortUpload(ctx);
  await next();
  const want = ctx.get('if-match');
  const have = ctx.response.get('etag');
  if (want && have && ctx.status < 300 && want.replace(/"/g, '') !== have.replace(/"/g, '')) {
    if (ctx.body && typeof ctx.body.destroy === 'function') ctx.body.destroy();
    throw new S3Error('PreconditionFailed', 'At least one of the pre-conditions you specified did not hold',
      { Condition: 'If-Match' });
  }
}

async function abortUpload(ctx) {
  const id = String(ctx.query.uploadId);
  const dir = path.join(ctx.store.getResourcePath(bucketOf(ctx), undefined, 'uploads'), id);
  if (!/^[0-9a-f]+$/.test(id) || !fs.existsSync(dir))
    throw new S3Error('NoSuchUpload', 'The specified upload does not exist.', { UploadId: id });
  fs.rmSync(dir, { recursive: true, force: true });
  ctx.status = 204;
}

const [dir, portFile, ...buckets] = process.argv.slice(2);
const app = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, vhostBuckets: false,
  configureBuckets: buckets.map(name => ({ name })) });
app.middleware.splice(1, 0, checks); /* after s3rver's logger, before its router */
app.run().then(addr => {
  fs.writeFileSync(portFile + '.tmp', String(addr.port));
  fs.renameSync(portFile + '.tmp', portFile);
});
const life = Number(process.env.RECIO_TEST_LIFETIME || 1800);
setTimeout(() => process.exit(0), life * 1000).unref();
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
