import express from 'express';
import Router from 'express-promise-router';

/** Builds the `/api/servers` routes. */
export async function createRouter(): Promise<express.Router> {
  const router = Router();
  router.use(express.json());

  // Unauthenticated on purpose: load balancers and the demo script probe it.
  router.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });

  return router;
}
