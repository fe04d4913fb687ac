`default_nettype none
// event_log: a ring of the last DEPTH events a harness saw, for its testbench to read after the
// fact instead of a Python callback per cycle (verif/kit/bfm.py, verif/tests/blocks/block_tb.py).
//
// At each rising edge with `valid` high (exactly high: an X or Z strobe logs nothing), the
// entry {stamp, data} goes to log[count % DEPTH] and `count` (free-running from reset) counts
// every event ever logged; a reader that knows how many it has read takes the new ones from the
// ring and can tell when more arrived than the ring keeps. What an entry holds is the harness's
// choice (a write's cycle, address and data; an instruction's cycle and pc), documented where it
// is instantiated.
//
// The stamp (a cycle count) is a port of its own, joined to the data only when an event is
// logged: a harness's concatenation with a counter would be evaluated again every cycle, and on
// Icarus every bit of it costs.
module event_log #(
    parameter STAMP_W = 32,     // bits of an entry's stamp (its most significant bits)
    parameter DATA_W  = 48,     // bits of the rest of the entry
    parameter DEPTH   = 1024    // entries kept
) (
    input  wire               clk,
    input  wire               rst,
    input  wire               valid,
    input  wire [STAMP_W-1:0] stamp,
    input  wire [DATA_W-1:0]  data,
    output reg  [31:0]        count
);

reg [STAMP_W+DATA_W-1:0] log [0:DEPTH-1];

always @(posedge clk) begin
    if (rst) begin
        count <= 32'd0;
    end else if (valid === 1'b1) begin
        log[count % DEPTH] <= {stamp, data};
        count <= count + 32'd1;
    end
end

endmodule

`default_nettype wire

`ifdef VERILATOR
// The ring and its count are read through VPI (builds without a global --public-flat-rw).
`verilator_config
public_flat_rw -module "event_log" -var "log"
public_flat_rw -module "event_log" -var "count"
`endif
