// Web component tests import stylesheets the way Vite does; under jest they are nothing.
module.exports = {};
