import { withoutBmcAddresses } from './bmcAddresses';

describe('withoutBmcAddresses', () => {
  it('takes the BMC out of receipts and errors, keeping what happened', () => {
    expect(
      withoutBmcAddresses(
        'ResetType GracefulShutdown accepted by https://10.0.5.21:8443/redfish/v1/Systems/1 (HTTP 204)',
        'https://10.0.5.21:8443',
      ),
    ).toBe('ResetType GracefulShutdown accepted by the BMC (HTTP 204)');
    expect(
      withoutBmcAddresses(
        'redfish: shutdown node worker-1 failed: Redfish BMC https://bmc-7.example: POST /redfish/v1/Systems/1/Actions/ComputerSystem.Reset failed: connect ECONNREFUSED 10.0.5.21:443',
        'https://bmc-7.example',
      ),
    ).toBe(
      'redfish: shutdown node worker-1 failed: the BMC: POST /redfish/v1/Systems/1/Actions/ComputerSystem.Reset failed: connect ECONNREFUSED the BMC',
    );
    expect(
      withoutBmcAddresses(
        'redfish: BMC bmc-7.example has no system with UUID 1 (node worker-1)',
        'https://bmc-7.example',
      ),
    ).toBe('redfish: BMC the BMC has no system with UUID 1 (node worker-1)');
    expect(withoutBmcAddresses('actor 3f2c, accepted')).toBe(
      'actor 3f2c, accepted',
    );
  });
});
