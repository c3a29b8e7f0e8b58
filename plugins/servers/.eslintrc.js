const { patterns } = require('../../scripts/eslint/outsideInput');

module.exports = require('@backstage/cli/config/eslint-factory')(__dirname, {
  restrictedSrcSyntax: patterns,
});
