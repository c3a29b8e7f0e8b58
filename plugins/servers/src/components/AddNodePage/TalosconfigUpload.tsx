import { useRef, useState, type ChangeEvent } from 'react';
import Alert from '@mui/material/Alert';
import AlertTitle from '@mui/material/AlertTitle';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Typography from '@mui/material/Typography';

/** A chosen file's text (FileReader: `Blob.text()` is missing in some browsers). */
function readText(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result ?? ''));
    reader.onerror = () => reject(reader.error);
    reader.readAsText(file);
  });
}

/**
 * The other cluster's talosconfig, chosen from a file, and what Rackside does with that
 * credential (where it is kept, for how long: `ttl` minutes at most).
 */
export function TalosconfigUpload(props: {
  cluster: string;
  namespace: string;
  ttl: number;
  talosconfig: string;
  onTalosconfig(text: string): void;
}) {
  const { cluster, namespace, ttl, talosconfig, onTalosconfig } = props;
  const [fileName, setFileName] = useState<string | undefined>();
  const fileInput = useRef<HTMLInputElement>(null);

  const onFile = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    if (!file) return;
    onTalosconfig(await readText(file));
    setFileName(file.name);
  };

  return (
    <>
      <Box mb={1} display="flex" alignItems="center" gap={2}>
        <Button variant="outlined" onClick={() => fileInput.current?.click()}>
          Upload the other cluster&apos;s talosconfig
        </Button>
        <input
          ref={fileInput}
          type="file"
          hidden
          onChange={onFile}
          data-testid="reclaim-talosconfig-file"
          aria-label="talosconfig file"
        />
        <Typography variant="body2" color="text.secondary">
          {fileName
            ? `${fileName} (${talosconfig.length} characters)`
            : 'No file chosen'}
        </Typography>
      </Box>
      <Alert
        severity="warning"
        sx={{ mb: 2 }}
        data-testid="reclaim-credential-warning"
      >
        <AlertTitle>The credential is stored</AlertTitle>
        {`The talosconfig is an admin credential of the other cluster. Rackside keeps it in a Secret in namespace ${namespace} of ${cluster}, where the operator (and anyone allowed to read Secrets there) can read it, until the reset is sent or the request expires after ${ttl} minutes; then the Secret is deleted. It is used for this one machine and never shown again.`}
      </Alert>
    </>
  );
}
