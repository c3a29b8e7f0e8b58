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

  it('takes out every mention of the host: bracketed, with a port, several times', () => {
    expect(
      withoutBmcAddresses(
        'connect to [fd00::21]:443 failed; retried fd00::21 and [fd00::21]',
        'https://[fd00::21]:443',
      ),
    ).toBe('connect to the BMC failed; retried the BMC and the BMC');
    expect(
      withoutBmcAddresses(
        'bmc-7.example:8443 then bmc-7.example refused',
        'https://bmc-7.example:8443',
      ),
    ).toBe('the BMC then the BMC refused');
  });
});
