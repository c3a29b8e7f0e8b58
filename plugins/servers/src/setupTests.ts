import '@testing-library/jest-dom';
import { configure } from '@testing-library/react';

// findBy* and waitFor wait for the event; this is only their ceiling. The default
// (1 s) was shorter than a lazily loaded extension takes to mount while the test
// command runs the rack and the builds beside Jest on two cores.
configure({ asyncUtilTimeout: 10_000 });
