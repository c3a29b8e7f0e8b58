/**
 * Test doubles of servers-node, for the tests and benches of every package: an in-memory
 * apiserver for watch readers ({@link FakeKube}), a Redfish BMC serving the DMTF mockups
 * ({@link MockupBmc}) and the test-only TLS material they use. The product entry point
 * (`@rackside/plugin-servers-node`) exports none of it.
 *
 * @packageDocumentation
 */
export { FakeKube } from './fakeKube';
export { MockupBmc, mockupDir, OtherOrigin } from './mockupBmc';
export type {
  MockupBmcOptions,
  MockupResource,
  OriginRequest,
  RecordedRequest,
} from './mockupBmc';
export {
  TEST_ADMIN_CRT_PEM,
  TEST_ADMIN_KEY_TALOS_PEM,
  TEST_CA_PEM,
} from './testIdentity';
export { OTHER_CA_PEM, TEST_BMC_CERT_PEM, TEST_BMC_KEY_PEM } from './testTls';
