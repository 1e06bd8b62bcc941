// Test certificates for the mTLS mesh, made with the openssl CLI (node:crypto cannot sign X.509): a
// CA and, per identity, a directory in the GRPC_TLS_DIR layout (tls.crt, tls.key, ca.crt) holding a
// certificate with CN and DNS SAN = the identity, good for both server and client authentication.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export interface TestCa {
  /** GRPC_TLS_DIR of `identity`, signed by this CA (made on first use). */
  dir(identity: string): string;
}

export function createTestCa(name = 'invoicing-test-ca'): TestCa {
  const root = mkdtempSync(path.join(os.tmpdir(), 'invoicing-certs-'));
  const caKey = path.join(root, 'ca.key');
  const caCrt = path.join(root, 'ca.crt');
  openssl(['req', '-x509', ...EC_KEY, '-keyout', caKey, '-out', caCrt, '-subj', `/CN=${name}`, '-days', '2']);
  const made = new Map<string, string>();
  return {
    dir(identity) {
      const existing = made.get(identity);
      if (existing) return existing;
      const dir = path.join(root, identity);
      mkdirSync(dir);
      const csr = path.join(dir, 'tls.csr');
      const ext = path.join(dir, 'ext.cnf');
      writeFileSync(ext, `subjectAltName=DNS:${identity}\nextendedKeyUsage=serverAuth,clientAuth\nkeyUsage=digitalSignature\n`);
      openssl(['req', ...EC_KEY, '-keyout', path.join(dir, 'tls.key'), '-out', csr, '-subj', `/CN=${identity}`]);
      openssl(['x509', '-req', '-in', csr, '-CA', caCrt, '-CAkey', caKey, '-CAcreateserial', '-out', path.join(dir, 'tls.crt'), '-days', '2', '-extfile', ext]);
      copyFileSync(caCrt, path.join(dir, 'ca.crt'));
      made.set(identity, dir);
      return dir;
    },
  };
}
