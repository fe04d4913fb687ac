`default_nettype none
`include "chip_defs.vh"
// vector_unit: VADD, VMAX and ARGMAX over int8 elements in the SRAM.
//
// Cycle e (0 .. len) reads element e (when e < len) and, from e = 1 on, uses element e-1, which
// the SRAM returns one cycle after its address:
//   VADD  : writes sram[c + e-1] = sat8(a[e-1] + b[e-1]); `sat` marks a clamped element.
//   VMAX  : keeps the running maximum; in cycle len writes it to sram[c], sign-extended.
//   ARGMAX: keeps the index of the first maximum (a later element replaces it only when it is
//           strictly larger); in cycle len writes that index to sram[c].
// `done` is high in cycle len: len + 1 cycles in all. Cycle 0 is the cycle after the command.
// The running instruction is held as its ISA opcode (chip_defs.vh).
module vector_unit #(
    parameter SRAM_AW = 12    // SRAM address width
) (
    input  wire               clk,
    input  wire               rst,

    // command (fields held stable by the controller while the unit runs)
    input  wire               cmd_vadd,       // one cycle: start a VADD
    input  wire               cmd_vmax,       // one cycle: start a VMAX
    input  wire               cmd_argmax,     // one cycle: start an ARGMAX
    input  wire [15:0]        cmd_a,
    input  wire [15:0]        cmd_b,
    input  wire [15:0]        cmd_c,
    input  wire [15:0]        cmd_len,        // elements, >= 1
    output wire               done,           // high in the last cycle
    output wire               sat,            // VADD: the element written this cycle was clamped

    // SRAM
    output wire [SRAM_AW-1:0] sram_raddr_a,
    input  wire [31:0]        sram_rdata_a,
    output wire [SRAM_AW-1:0] sram_raddr_b,
    input  wire [31:0]        sram_rdata_b,
    output wire               sram_we,
    output wire [SRAM_AW-1:0] sram_waddr,
    output wire [31:0]        sram_wdata
);

localparam S_IDLE = 1'b0;
localparam S_RUN  = 1'b1;    // cycles 0 .. len of an instruction

// ---------------------------------------------------------------------------------------------
// state

reg                 state_reg,    state_next;
reg [`OPCODE_W-1:0] op_reg,       op_next;          // the instruction: VADD, VMAX or ARGMAX
reg [15:0]          idx_reg,      idx_next;         // cycle e: element e is read, e-1 is here
reg [7:0]           best_reg,     best_next;        // VMAX/ARGMAX: the largest element so far
reg [15:0]          best_idx_reg, best_idx_next;    // ARGMAX: its index

wire starting = cmd_vadd || cmd_vmax || cmd_argmax;

// element e-1, read last cycle
wire [7:0]  x        = sram_rdata_a[7:0];
wire [7:0]  y        = sram_rdata_b[7:0];
wire [15:0] elem     = idx_reg - 16'd1;
wire        running  = (state_reg == S_RUN);
wire        has_elem = running && (idx_reg != 16'd0);
wire        last     = running && (idx_reg == cmd_len);

// VADD: 9-bit sum, clamped
wire [8:0]  sum      = {x[7], x} + {y[7], y};
wire        sum_high = (sum[8:7] == 2'b01);                  // above 127
wire        sum_low  = (sum[8:7] == 2'b10);                  // below -128
wire [7:0]  sum_sat  = sum_high ? 8'h7F : (sum_low ? 8'h80 : sum[7:0]);

// VMAX / ARGMAX: element 0 starts the running maximum; later ones replace it when larger
wire        larger   = $signed(x) > $signed(best_reg);
wire        take     = (idx_reg == 16'd1) || larger;
wire [7:0]  best     = take ? x : best_reg;
wire [15:0] best_idx = take ? elem : best_idx_reg;

wire [16:0] rd_a_sum = {1'b0, cmd_a} + {1'b0, idx_reg};
wire [16:0] rd_b_sum = {1'b0, cmd_b} + {1'b0, idx_reg};
wire [16:0] wr_sum   = {1'b0, cmd_c} + {1'b0, elem};
wire [16:0] c_wide   = {1'b0, cmd_c};

wire is_vadd = (op_reg == `OP_VADD);

assign done         = last;
assign sat          = has_elem && is_vadd && (sum_high || sum_low);

assign sram_raddr_a = rd_a_sum[SRAM_AW-1:0];
assign sram_raddr_b = rd_b_sum[SRAM_AW-1:0];
assign sram_we      = is_vadd ? has_elem : last;
assign sram_waddr   = is_vadd ? wr_sum[SRAM_AW-1:0] : c_wide[SRAM_AW-1:0];
assign sram_wdata   = is_vadd              ? {{24{sum_sat[7]}}, sum_sat} :
                      (op_reg == `OP_VMAX) ? {{24{best[7]}}, best} :
                                             {16'd0, best_idx};

always @* begin
    state_next    = state_reg;
    op_next       = op_reg;
    idx_next      = idx_reg;
    best_next     = best_reg;
    best_idx_next = best_idx_reg;

    case (state_reg)
        S_IDLE: begin
            if (starting) begin
                state_next = S_RUN;
                op_next    = cmd_vmax ? `OP_VMAX : (cmd_argmax ? `OP_ARGMAX : `OP_VADD);
                idx_next   = 16'd0;
            end
        end
        S_RUN: begin
            idx_next = idx_reg + 16'd1;
            if (has_elem) begin
                best_next     = best;
                best_idx_next = best_idx;
            end
            if (last) begin
                state_next = S_IDLE;
            end
        end
    endcase
end

// (an idle cycle without a command changes nothing: on Icarus every register copied costs, and
// the unit is idle most cycles)
always @(posedge clk) begin
    if (rst) begin
        state_reg    <= S_IDLE;
        op_reg       <= `OP_VADD;
        idx_reg      <= 16'd0;
        best_reg     <= 8'd0;
        best_idx_reg <= 16'd0;
    end else if (state_reg != S_IDLE || starting) begin
        state_reg    <= state_next;
        op_reg       <= op_next;
        idx_reg      <= idx_next;
        best_reg     <= best_next;
        best_idx_reg <= best_idx_next;
    end
end

wire unused_vector_unit = &{1'b0, sram_rdata_a[31:8], sram_rdata_b[31:8],
                            rd_a_sum[16:SRAM_AW], rd_b_sum[16:SRAM_AW], wr_sum[16:SRAM_AW],
                            c_wide[16:SRAM_AW]};

endmodule

`default_nettype wire
