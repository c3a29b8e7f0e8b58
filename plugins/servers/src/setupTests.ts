import '@testing-library/jest-dom';
import { configure } from '@testing-library/react';

// Ceilings, not waits: findBy* and waitFor wait for the event, a test for its last
// line; these only bound how long a test may take before it fails. A test never waits
// on lazy loading inside them (a test of a lazy page or tab imports its module in a
// beforeAll: alpha.test.tsx), but a render through MUI is CPU work: well under a second
// alone, several seconds while the test command runs the rack and the builds beside
// Jest on two cores (a drain's ceremony took 7 s beside two busy processes), more
// than findBy's 1 s and Jest's 5 s defaults. findBy's ceiling stays below the test's,
// so a test that fails names what it was waiting for.
configure({ asyncUtilTimeout: 10_000 });
jest.setTimeout(20_000);
