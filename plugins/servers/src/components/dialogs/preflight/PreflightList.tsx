import { useLayoutEffect, useRef, useState, type ReactNode } from 'react';
import Box from '@mui/material/Box';
import List from '@mui/material/List';
import ListItem from '@mui/material/ListItem';
import ListItemText, {
  type ListItemTextProps,
} from '@mui/material/ListItemText';
import Typography from '@mui/material/Typography';
import { podKey, type DrainPod } from '@rackside/plugin-servers-common';
import { podDetails } from './preflightText';

/**
 * The pre-flight's list items wrap: the Backstage theme cuts dense list text
 * to one line with an ellipsis, which would hide the end of a reason (why a
 * pod is refused, why a virtual machine blocks the drain).
 */
const WRAP_SX = {
  whiteSpace: 'normal',
  overflow: 'visible',
  overflowWrap: 'anywhere',
} as const;

/**
 * A list of at most 180 px that scrolls beyond. While it does, it takes the
 * keyboard focus (named by its heading), so that the arrow keys can scroll it
 * without a pointer (axe scrollable-region-focusable); a list that fits is
 * no tab stop.
 */
function ScrollingList(props: {
  ordered?: boolean;
  labelledBy: string;
  children?: ReactNode;
}) {
  const { ordered, labelledBy, children } = props;
  const ref = useRef<HTMLUListElement>(null);
  const [scrolls, setScrolls] = useState(false);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return undefined;
    const check = () => setScrolls(el.scrollHeight > el.clientHeight + 1);
    check();
    // Wrapped text grows and shrinks with the dialog's width.
    if (typeof ResizeObserver === 'undefined') return undefined;
    const observer = new ResizeObserver(check);
    observer.observe(el);
    return () => observer.disconnect();
  }, [children]);
  return (
    <List
      ref={ref}
      dense
      disablePadding
      component={ordered ? 'ol' : 'ul'}
      sx={{ maxHeight: 180, overflowY: 'auto' }}
      tabIndex={scrolls ? 0 : undefined}
      aria-labelledby={scrolls ? labelledBy : undefined}
    >
      {children}
    </List>
  );
}

export function Section(props: {
  title: string;
  count: number;
  testId: string;
  empty?: string;
  /** A sentence under the heading: what the drain does with this class. */
  note?: string;
  /** The items come in an order that matters (`ol`). */
  ordered?: boolean;
  children?: ReactNode;
}) {
  const { title, count, testId, empty, note, ordered, children } = props;
  const headingId = `rackside-preflight-${testId}`;
  if (count === 0 && !empty) return null;
  return (
    <Box component="section" aria-labelledby={headingId} data-testid={testId}>
      <Typography variant="subtitle2" component="h3" id={headingId} mt={1}>
        {`${title} (${count})`}
      </Typography>
      {note && count > 0 && (
        <Typography variant="body2" color="text.secondary">
          {note}
        </Typography>
      )}
      {count === 0 ? (
        <Typography variant="body2" color="text.secondary">
          {empty}
        </Typography>
      ) : (
        <ScrollingList ordered={ordered} labelledBy={headingId}>
          {children}
        </ScrollingList>
      )}
    </Box>
  );
}

/** The data attributes the browser tests read on an item (`data-blocks-now`...). */
type DataAttributes = { [name: `data-${string}`]: string | number | boolean };

/**
 * One item of a pre-flight section: a line that wraps (never cut), and the
 * details under it.
 */
export function DetailItem(props: {
  primary: ReactNode;
  secondary?: ReactNode;
  /** Props of the line's Typography (`component: 'div'` where it holds a chip). */
  primaryTypographyProps?: ListItemTextProps<'div'>['primaryTypographyProps'];
  data?: DataAttributes;
}) {
  return (
    <ListItem disableGutters sx={{ py: 0 }} {...props.data}>
      <ListItemText<'div'>
        sx={WRAP_SX}
        primary={props.primary}
        secondary={props.secondary}
        primaryTypographyProps={props.primaryTypographyProps}
      />
    </ListItem>
  );
}

/** An item's line with a chip after its text (what the drain does to it). */
export function WithChip(props: { text: string; chip: ReactNode }) {
  return (
    <Box display="flex" alignItems="center" gap={1}>
      <span>{props.text}</span>
      {props.chip}
    </Box>
  );
}

function PodItem(props: { pod: DrainPod }) {
  const { pod } = props;
  return <DetailItem primary={podKey(pod)} secondary={podDetails(pod)} />;
}

/** A section that lists pods, each with its controller, grace period and state. */
export function PodSection(props: {
  title: string;
  pods: readonly DrainPod[];
  testId: string;
  empty?: string;
  note?: string;
}) {
  const { pods, ...section } = props;
  return (
    <Section {...section} count={pods.length}>
      {pods.map(pod => (
        <PodItem key={podKey(pod)} pod={pod} />
      ))}
    </Section>
  );
}
