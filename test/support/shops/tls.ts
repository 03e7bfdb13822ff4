import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';

/** A certificate authority made for one test run, and a server certificate it signed for the local host. */
export interface TestCa {
  /** The CA certificate (PEM): give it as `ca` to an agent, or write it to a file for `NODE_EXTRA_CA_CERTS`. */
  caPem: string;
  /** The server's certificate (for 127.0.0.1, ::1 and localhost) and its key, both PEM. */
  certPem: string;
  keyPem: string;
}

const rsaKeys = () => {
  // Node makes the key (native, a few milliseconds); forge only builds and signs the certificates.
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { privateKey: forge.pki.privateKeyFromPem(privateKey), publicKey: forge.pki.publicKeyFromPem(publicKey) };
};

const serial = () => `01${randomBytes(15).toString('hex')}`;

function certificate(subject: forge.pki.CertificateField[], publicKey: forge.pki.PublicKey, days: number): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + days * 86_400_000);
  cert.setSubject(subject);
  return cert;
}

let cached: TestCa | undefined;

/** The run's test CA and server certificate, made on first use (one per process). */
export function testCa(): TestCa {
  if (cached) return cached;
  const ca = rsaKeys();
  const caSubject = [
    { name: 'commonName', value: 'Shop simulator test CA' },
    { name: 'organizationName', value: 'ERP partner API tests' },
  ];
  const caCert = certificate(caSubject, ca.publicKey, 2);
  caCert.setIssuer(caSubject);
  caCert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  caCert.sign(ca.privateKey, forge.md.sha256.create());

  const server = rsaKeys();
  const serverCert = certificate([{ name: 'commonName', value: 'localhost' }], server.publicKey, 2);
  serverCert.setIssuer(caSubject);
  serverCert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: [
        { type: 2, value: 'localhost' },
        { type: 7, ip: '127.0.0.1' },
        { type: 7, ip: '::1' },
      ],
    },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  serverCert.sign(ca.privateKey, forge.md.sha256.create());

  cached = {
    caPem: forge.pki.certificateToPem(caCert),
    certPem: forge.pki.certificateToPem(serverCert),
    keyPem: forge.pki.privateKeyToPem(server.privateKey),
  };
  return cached;
}
