import type { ReactNode } from 'react';
import Paper from '@mui/material/Paper';
import Typography from '@mui/material/Typography';

/**
 * One titled section of a page under the Servers page (a maintenance, a plan):
 * a paper named by its heading, so that a screen reader lists it by title.
 */
export function PageSection(props: {
  title: string;
  /** The heading's id, which names the section (and may name a table in it). */
  headingId: string;
  testId?: string;
  children: ReactNode;
}) {
  const { title, headingId, testId, children } = props;
  return (
    <Paper
      component="section"
      aria-labelledby={headingId}
      data-testid={testId}
      sx={{ p: 2, mb: 2 }}
    >
      <Typography variant="h6" component="h2" id={headingId} gutterBottom>
        {title}
      </Typography>
      {children}
    </Paper>
  );
}
